// ApplicationFailure types that validators throw; the API maps each to one HTTP status.
export const FAILURE_STATUS = {
  BadInput: 400,
  UnknownPending: 404,
  /** an agent action names something its state does not have (an unknown step) */
  NotFound: 404,
  TurnRunning: 409,
  NotPending: 409,
  /** a message without `pending` while the turn waits for a person: it names the open items */
  PendingOpen: 409,
  /** an agent action that conflicts with the state as it is now */
  Conflict: 409,
  DecisionMismatch: 422,
} as const;
export type FailureType = keyof typeof FAILURE_STATUS;
