// A decision on a pending item in flight: the buttons wait while it runs, and its error stays in view.
import { useState } from 'react';
import type { Decide } from './agentHome';
import type { ApiError } from './api';

export function useDecision(onDecide: Decide) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError>();
  const run = async (body: Record<string, unknown>) => {
    setBusy(true);
    setError(undefined);
    try {
      await onDecide(body);
      return true;
    } catch (e) {
      setError(e as ApiError);
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run };
}
