export { registerStreamRoutes, STREAM_MAX_BUFFERED_BYTES } from './register-stream-routes.js';
export { streamRouteSpecs, isRawStreamRoute } from './stream-route-spec.js';
export { WS_CLOSE } from './ws-subscriber.js';
export { WS_PROTOCOL } from './stream-frames.js';
