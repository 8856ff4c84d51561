// A JSON value as the JSON view (docs/json-view.md) and the IPC carry it: the one type every
// module of the state layer reads values as.

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
