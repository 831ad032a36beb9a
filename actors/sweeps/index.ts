export { expireLeasesPass, advanceThreadsPass } from './engine-sweeps.js';
