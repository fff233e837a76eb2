// The local stack's cron trigger (edge/src/index.ts, localScheduledTrigger):
// the path and the header carrying the secret of the Worker's start.
export const LOCAL_SCHEDULED_PATH = '/__edgemail/scheduled';
export const LOCAL_SCHEDULED_HEADER = 'x-edgemail-scheduled-secret';
