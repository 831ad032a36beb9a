// The wire protocols a model provider can speak: one list, owned by the streaming adapters
// (each id has an adapter there), re-exported here for the registry's descriptors.
export { MODEL_APIS, isModelApi, type ModelApi } from '../model-adapters/index.js';
