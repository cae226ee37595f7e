// Schemas of settings read from the environment, shared by the runtime's config and the agents' settings.
import { z } from 'zod';

export const optionalUrl = z.url({ error: 'must be a URL' }).optional();

export const positiveInt = (fallback: number) =>
  z.coerce.number({ error: 'must be a number' }).int('must be a whole number').positive('must be positive').default(fallback);

/** An empty variable (`X=` in an env file) means unset. */
export const emptyAsUndefined = (value: unknown) => (value === '' ? undefined : value);
