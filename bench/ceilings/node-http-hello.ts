// Ceiling: node:http answering "hello", to show what uWS buys over the standard library.
import type { Scenario } from '../scenario.js';
import { measureHello } from './measure-hello.js';

export const nodeHttpHello: Scenario = {
  name: 'node-http-hello',
  kind: 'ceiling',
  run: (ctx) => measureHello(ctx, 'http'),
  ratios: [{ name: 'node_http_vs_uws', numerator: 'node-http-hello.requests_per_sec', denominator: 'uws-hello.requests_per_sec' }],
};
