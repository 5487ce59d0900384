/** Activity signatures the workflows call. Implementations live in @mango/activities. */
export interface ProbeActivities {
  /** PostgreSQL's now(), as RFC 3339. */
  databaseTime(): Promise<string>;
}
