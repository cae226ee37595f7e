// A tool's approval policy from the config: the server's `approval` (default `unless-read-only`, which reads
// the tool's readOnlyHint annotation), then the tool's own override.
import type { ToolPolicy } from '../shared/tool-spec.ts';
import type { McpServerConfig } from './config.ts';

export function policyFor(server: Pick<McpServerConfig, 'approval' | 'tools'>, tool: string, readOnly: boolean): ToolPolicy {
  const override = server.tools[tool];
  const approval = override?.approval ?? server.approval;
  const gated = approval === 'always' || (approval === 'unless-read-only' && !readOnly);
  return {
    approval: gated,
    decisions: gated ? (override?.decisions ?? ['approve', 'reject', 'edit']) : [],
    ...(override?.deadline !== undefined ? { deadlineMs: override.deadline } : {}),
    onTimeout: override?.timeoutAction ?? 'reject',
  };
}
