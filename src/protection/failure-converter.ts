// The failure converter of every Brigade client, worker and workflow bundle: the SDK's default, with a failure's
// message and stack trace moved into a payload (encodeCommonAttributes), so the payload codec seals them like
// any other payload. A tool's error can quote what a person typed or a record it found; Temporal keeps only
// "Encoded failure". Loaded by path (DataConverter.failureConverterPath): the workflow bundle imports it too,
// so it imports nothing but the SDK.
import { DefaultFailureConverter } from '@temporalio/common';

export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
