// The boundary for payloads that cannot be opened. Anyone who may signal a workflow can send a payload that claims
// to be sealed (`temporal workflow signal … --input-meta encoding=binary/encrypted`) or names a key that no longer
// exists; a codec that throws on it fails the workflow task, again on every retry, and the conversation is stuck
// for good. Here such a payload becomes a value no handler accepts, `{ "refusedPayload": "<why>" }`, so a signal
// carrying it is recorded as rejected (signal.rejected) and the run goes on, and the refusal is logged by its
// kind and workflow id. What may pass (PostgreSQL down while a person's key is looked up) still fails the task,
// which Temporal retries.
import type { Payload, PayloadCodec, SerializationContext } from '@temporalio/common';
import { UnknownKeyError, UnopenablePayloadError } from './payload-codec.ts';

export const REFUSED_PAYLOAD_FIELD = 'refusedPayload';

const refusal = (reason: string): Payload => ({
  metadata: { encoding: new TextEncoder().encode('json/plain') },
  data: new TextEncoder().encode(JSON.stringify({ [REFUSED_PAYLOAD_FIELD]: reason })),
});

const isRefusal = (error: unknown): error is Error => error instanceof UnopenablePayloadError || error instanceof UnknownKeyError;

export type RefusalLog = (line: string) => void;

/** `codec`, with payloads it cannot open (forged, cut, or sealed under a key that is gone) refused instead of thrown. */
export function refusingCodec(codec: PayloadCodec, log: RefusalLog = (line) => console.warn(line)): PayloadCodec {
  return {
    encode: (payloads, context) => codec.encode(payloads, context),
    async decode(payloads: Payload[], context?: SerializationContext): Promise<Payload[]> {
      try {
        return await codec.decode(payloads, context);
      } catch (error) {
        if (!isRefusal(error)) throw error;
      }
      // one of them cannot be opened: open the rest one by one, so that only that one is refused
      return Promise.all(
        payloads.map(async (payload) => {
          try {
            return (await codec.decode([payload], context))[0]!;
          } catch (error) {
            if (!isRefusal(error)) throw error;
            log(`payload codec: refused a payload of ${context?.workflowId ?? 'no workflow'} (${error.name}): ${error.message}`);
            return refusal(error.message);
          }
        }),
      );
    },
  };
}
