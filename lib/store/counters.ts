// Usage counters (download counts, last-used times) as the API families see them: kept apart from the event
// log, in the data directory (file/counters.ts) or PostgreSQL (postgres/counters.ts).

/** What the API families use: the data directory's counters and PostgreSQL's (postgres/counters.ts) alike. */
export interface Counters {
  get(key: string): number;
  add(key: string, by?: number): number;
  set(key: string, value: number): void;
  delete(key: string): void;
  flush(): Promise<void>;
}
