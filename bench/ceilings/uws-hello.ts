// Ceiling: raw uWebSockets.js answering "hello". The service's HTTP figures are divided by it.
import type { Scenario } from '../scenario.js';
import { measureHello } from './measure-hello.js';

export const uwsHello: Scenario = {
  name: 'uws-hello',
  kind: 'ceiling',
  run: (ctx) => measureHello(ctx, 'uws'),
};
