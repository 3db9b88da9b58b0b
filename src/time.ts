/** A time as the API writes timestamps: UTC, whole seconds, `YYYY-MM-DDTHH:MM:SSZ`. */
export function formatTimestamp(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function nowTimestamp(): string {
  return formatTimestamp(new Date());
}
