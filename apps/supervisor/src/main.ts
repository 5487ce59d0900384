import { runMain } from '@mango/platform-http';
import { bootstrap } from './bootstrap';

runMain('supervisor', bootstrap);
