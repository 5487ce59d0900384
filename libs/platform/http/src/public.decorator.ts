import { SetMetadata } from '@nestjs/common';

export const PUBLIC_ROUTE = 'mango:public';
/** Marks a route that needs no credential (health endpoints only). */
export const Public = () => SetMetadata(PUBLIC_ROUTE, true);
