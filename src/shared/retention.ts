// The retention sweep's activity as its workflow sees it (src/workflows/retention-sweep.ts); implemented in
// src/protection/retention.ts. Types only: the workflow bundle imports no I/O.
export interface SweepReport {
  conversations: number;
  usageRows: number;
  /** the cut-offs it applied, ISO; absent when that retention is off */
  conversationsBefore?: string;
  usageBefore?: string;
}

export interface RetentionActivities {
  sweepRetention(): Promise<SweepReport>;
}
