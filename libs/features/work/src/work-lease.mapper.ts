/** The row ⇄ lease mapping now lives beside the Work item repository (libs/persistence). */
export { leaseColumns, toLease } from '@mango/persistence';
