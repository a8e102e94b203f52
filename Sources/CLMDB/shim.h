#ifndef KVSTORE_CLMDB_SHIM_H
#define KVSTORE_CLMDB_SHIM_H

// Everything in lmdb.h imports into Swift as it is; the shim only names the header.
#include <lmdb.h>

#endif
