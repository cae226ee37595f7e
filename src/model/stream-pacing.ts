// A streamed chat call is bounded by how long the model takes to begin and by the longest silence between its
// pieces, never by a clock on the whole answer: a reasoning model that streams for ten minutes is as alive as a
// reply of ten seconds, and a stream that went quiet is cut after the gap, not after the rest of a wall clock.
// Running out of either is no passing fault (the same request would wait as long again), so it is not retried.
import { ModelCallError } from './types.ts';
import type { ChatModel } from './types.ts';

export interface Pacing {
  /** the longest wait for the first piece (headers, then any chunk) */
  firstPieceMs: number;
  /** the longest gap between two pieces once the answer has begun */
  idleMs: number;
}

const words = (ms: number) => (ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`);

/** One cause, one wording: whichever clock (ours or an SDK's own) noticed it first. */
export const notStartedText = (ms: number) => `The model did not start answering within ${words(ms)}`;
export const wentQuietText = (ms: number) => `The model stopped sending its answer: nothing came for ${words(ms)}`;
/** a one-shot call (no stream to watch), bounded as a whole */
export const unansweredText = (ms: number) => `The model did not answer within ${words(ms)}`;

export class ModelTimedOut extends ModelCallError {
  override name = 'ModelTimedOut';
  constructor(message: string) {
    super(message, { retryable: false });
  }
}

/** The chat model, each call held to `pacing` through its abort signal and its pieces (`onPiece`). */
export function pacedModel(model: ChatModel, pacing: Pacing): ChatModel {
  return {
    name: model.name,
    async generate(request) {
      const watchdog = new AbortController();
      let timer: NodeJS.Timeout | undefined;
      const arm = (ms: number, text: string) => {
        clearTimeout(timer);
        timer = setTimeout(() => watchdog.abort(new ModelTimedOut(text)), ms);
      };
      arm(pacing.firstPieceMs, notStartedText(pacing.firstPieceMs));
      const signal = request.signal ? AbortSignal.any([request.signal, watchdog.signal]) : watchdog.signal;
      try {
        return await model.generate({
          ...request,
          signal,
          onPiece: () => {
            arm(pacing.idleMs, wentQuietText(pacing.idleMs));
            request.onPiece?.();
          },
        });
      } catch (error) {
        // the caller's own abort (Stop) comes first: its reason is what the caller asked for
        if (watchdog.signal.aborted && !request.signal?.aborted) throw watchdog.signal.reason;
        throw error;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
