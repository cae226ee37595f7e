import type { Config } from '../src/config.ts';

export type LogLevel = Config['LOG_LEVEL'];
export type LogLine = (line: string) => void;
export interface Log {
  debug: LogLine;
  info: LogLine;
  warn: LogLine;
  error: LogLine;
}

const RANK: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };

/** Plain lines for a terminal or a container log; lines below `level` are dropped. */
export function createLog(level: LogLevel): Log {
  const at = (lineLevel: LogLevel, write: (line: string) => void): LogLine => (RANK[lineLevel] >= RANK[level] ? write : () => undefined);
  return {
    debug: at('debug', (line) => console.log(line)),
    info: at('info', (line) => console.log(line)),
    warn: at('warn', (line) => console.error(`warning: ${line}`)),
    error: at('error', (line) => console.error(line)),
  };
}
