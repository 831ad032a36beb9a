export { modalEnvironmentClient, MODAL_WORKDIR } from './modal-environment.js';
export { MODAL_PROTO, MODAL_SERVICE, modalMethods, encodeMessage, decodeMessage } from './modal-proto.js';
