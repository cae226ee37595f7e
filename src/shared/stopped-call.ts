// What a call that Stop interrupted while an MCP server worked on it says, in the transcript (the workflow's
// tool message) and in the tool-call record the export reads (the call's activity): the same words in both,
// since the server may well have finished what it was asked to do.
export const SERVER_CALL_STOPPED = 'The user pressed Stop: stopped while the server was working on it; it may have completed.';

export const serverCallStopped = (): { status: 'stopped'; error: string } => ({ status: 'stopped', error: SERVER_CALL_STOPPED });
