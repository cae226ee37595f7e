// What waits for the person: each pending item in the view of its kind (pendingKinds.ts).
import type { Decide } from './agentHome';
import { pendingKind } from './pendingKinds';
import type { AgentName, Meta, PendingItem } from './types';

export function PendingPanel({
  pending,
  meta,
  agent,
  onDecide,
}: {
  pending: PendingItem[];
  meta?: Meta;
  agent: AgentName;
  onDecide: Decide;
}) {
  if (pending.length === 0) return null;
  return (
    <section className="pending" aria-label="Waiting for you">
      {pending.map((item) => {
        const { View } = pendingKind(item.kind);
        return (
          <div key={item.id} className="pending-slot" data-pending-card={item.id}>
            <View
              item={item}
              agent={agent}
              schema={meta?.agents.find((a) => a.name === agent)?.tools.find((t) => t.name === item.tool)?.parameters}
              onDecide={onDecide}
            />
          </div>
        );
      })}
    </section>
  );
}
