export { LiveProvider, useLiveEvents, useLiveStatus } from './live';
export { LiveStream, LIVE_KINDS, type LiveEvent, type LiveKind, type Listener, type StreamStatus } from './stream';
