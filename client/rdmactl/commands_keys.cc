// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// rdmactl peer-key FILE: a new shared peer key (daemon.peer_key_file): 32
// random bytes from the kernel as 64 hex digits, written to FILE with mode
// 0600, never over an existing file. Copy the same file to every daemon of
// the deployment, owned by the uid rdmad runs as.

#include "client/rdmactl/command.h"
#include "common/secret_file.h"
#include "common/secure_random.h"

namespace rdmactl {

void DeclarePeerKey(CLI::App& verb, Context& ctx) {
  auto path = std::make_shared<std::string>();
  verb.add_option("FILE", *path, "where to write the key (must not exist)")->required();
  RunsWith(verb, ctx, [&ctx, path] {
    rdmad::Status written = rdmad::WriteSecretFile(*path, rdmad::SecureRandomHex(32) + "\n");
    if (!written.ok()) return Fail(ctx, "peer-key", written.message());
    if (ctx.globals.json) {
      PrintJson(ctx, Json{{"peer_key_file", *path}});
    } else {
      PrintText(ctx, "wrote a new peer key to " + *path +
                         " (mode 0600): copy it to every daemon of the deployment and set "
                         "daemon.peer_key_file\n");
    }
    return kExitOk;
  });
}

}  // namespace rdmactl
