export { expireLeasesPass, requeueLostWorkersPass, advanceThreadsPass } from './engine-sweeps.js';
