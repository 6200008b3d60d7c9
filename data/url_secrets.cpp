#include "data/url_secrets.h"

#include <algorithm>
#include <cctype>
#include <string_view>

namespace foxeval {
namespace {

// Parameter names that carry a credential, compared lowercased with '-' and '_' dropped
// (api-key, api_key, apiKey, access_token, X-Amz-Signature, sig, password, ...).
bool credential_name(std::string_view name) {
  std::string n;
  for (const char c : name)
    if (c != '-' && c != '_' && c != '.') n += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* w : {"key", "token", "secret", "pass", "pwd", "auth", "credential", "sig", "session", "cookie"})
    if (n.find(w) != std::string::npos) return true;
  return false;
}

}  // namespace

std::string url_without_secrets(const std::string& url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string::npos) return url;
  const size_t host = scheme + 3;
  const size_t authority_end = std::min(url.find_first_of("/?#", host), url.size());
  const std::string authority = url.substr(host, authority_end - host);
  const size_t at = authority.rfind('@');
  // The fragment is never sent to a server; it is dropped (it may carry an access_token).
  const size_t frag = std::min(url.find('#', authority_end), url.size());
  const size_t q = std::min(url.find('?', authority_end), frag);
  std::string out = url.substr(0, host) + (at == std::string::npos ? authority : authority.substr(at + 1)) +
                    url.substr(authority_end, q - authority_end);
  if (q == frag) return out;
  const std::string query = url.substr(q + 1, frag - q - 1);
  out += '?';
  for (size_t start = 0; start <= query.size();) {
    const size_t end = std::min(query.find_first_of("&;", start), query.size());
    const std::string item = query.substr(start, end - start);
    const size_t eq = item.find('=');
    if (start > 0) out += query[start - 1];
    if (credential_name(std::string_view(item).substr(0, eq)))
      out += eq == std::string::npos ? "[redacted]" : item.substr(0, eq + 1) + "[redacted]";
    else
      out += item;
    start = end + 1;
  }
  return out;
}

nlohmann::json without_url_secrets(nlohmann::json value) {
  if (value.is_string()) {
    const std::string& s = value.get_ref<const std::string&>();
    if (s.find("://") != std::string::npos) return url_without_secrets(s);
    return value;
  }
  if (value.is_object() || value.is_array())
    for (auto& v : value) v = without_url_secrets(std::move(v));
  return value;
}

}  // namespace foxeval
