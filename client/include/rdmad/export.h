// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// RDMAD_EXPORT marks what librdmadclient exports: the library is built with
// hidden visibility, so only the public API declared in these headers is
// part of its ABI, never its internals.

#ifndef RDMAD_EXPORT_H_
#define RDMAD_EXPORT_H_

#define RDMAD_EXPORT [[gnu::visibility("default")]]

#endif  // RDMAD_EXPORT_H_
