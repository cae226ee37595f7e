// The retention sweep's activity as its workflow sees it (src/workflows/retention-sweep.ts); implemented in
// src/protection/retention.ts. Types only: the workflow bundle imports no I/O.
export interface SweepReport {
  conversations: number;
  usageRows: number;
  /** conversations past the cut-off kept because something in them was still open (an item, a running turn) */
  kept?: number;
  /** the cut-offs it applied, ISO; absent when that retention is off */
  conversationsBefore?: string;
  usageBefore?: string;
}

export interface RetentionActivities {
  sweepRetention(): Promise<SweepReport>;
}
