#!/usr/bin/env node
import fs from 'node:fs'; import { a, b as c } from "os"; import * as p from 'path'; import 'util';
export * from './re.js';
const l = require('./lib'); require.resolve('x'); const m = await import('./d.mjs');
module.constructor._load('y'); process.binding('fs'); console.log(import.meta.url);
