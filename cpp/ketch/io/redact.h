#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ketch::io {

/// `text` with every credential replaced by "***", for error messages, explain output and logs:
/// - the user-info of every URL in it (`scheme://user:password@host/...` → `scheme://***@host/...`);
/// - the values of credential-like query parameters of those URLs (`?token=***`,
///   `X-Amz-Signature=***`, `X-Amz-Credential=***`, `sig=***`, ...; see IsSecretName);
/// - each of `secrets` (e.g. the S3 keys of a config) wherever it appears (entries shorter than
///   4 characters are ignored: they would garble ordinary words).
/// The only redaction routine of the C++ code; Python's twin is `ketch.io.redact.redact`.
std::string Redact(std::string_view text, const std::vector<std::string>& secrets = {});

/// True for names of options and query parameters that carry credentials (case-insensitive, '-'
/// and '_' ignored): token, secret, password, signature, credential, key ids and access keys, ...
/// e.g. "s3_access_key", "X-Amz-Signature", "token", "sig", "key".
bool IsSecretName(std::string_view name);

}  // namespace ketch::io
