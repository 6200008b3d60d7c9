// A URL as it may be stored or shown: without the user:password@ part and with the values of
// credential-like query parameters (api-key, token, secret, password, sig, auth, ...) replaced by
// "[redacted]". Results, journals and messages keep where a server was, never how to log in to it.
#pragma once
#include <nlohmann/json.hpp>

#include <string>

namespace foxeval {

std::string url_without_secrets(const std::string& url);

// Every string in `value` (recursively) that holds "://" passed through url_without_secrets.
nlohmann::json without_url_secrets(nlohmann::json value);

}  // namespace foxeval
