#include "scrape.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "support/net.h"

namespace server {
namespace {

// Parses `{a="1",b="2"}` starting at text[*pos] == '{'; leaves *pos after '}'.
bool ParseLabels(const std::string& text, size_t* pos, std::map<std::string, std::string>* labels) {
  size_t i = *pos + 1;
  while (i < text.size() && text[i] != '}') {
    const size_t equals = text.find('=', i);
    if (equals == std::string::npos || equals + 1 >= text.size() || text[equals + 1] != '"') {
      return false;
    }
    const std::string name = text.substr(i, equals - i);
    std::string value;
    size_t j = equals + 2;
    for (; j < text.size() && text[j] != '"'; ++j) {
      if (text[j] == '\\' && j + 1 < text.size()) ++j;
      value += text[j];
    }
    if (j >= text.size()) return false;
    (*labels)[name] = value;
    i = j + 1;
    if (i < text.size() && text[i] == ',') ++i;
  }
  if (i >= text.size()) return false;
  *pos = i + 1;
  return true;
}

}  // namespace

std::string SeriesKey(const std::string& name, const std::map<std::string, std::string>& labels) {
  if (labels.empty()) return name;
  std::string key = name + "{";
  bool first = true;
  for (const auto& [label, value] : labels) {
    absl::StrAppend(&key, first ? "" : ",", label, "=\"", value, "\"");
    first = false;
  }
  return key + "}";
}

double Scrape::Value(const std::string& name,
                     const std::map<std::string, std::string>& labels) const {
  const auto it = samples.find(SeriesKey(name, labels));
  if (it == samples.end() && labels.count("model") == 0) {
    const auto summed = over_models.find(SeriesKey(name, labels));
    if (summed != over_models.end()) return summed->second;
  }
  if (it == samples.end()) {
    ADD_FAILURE() << "no series " << SeriesKey(name, labels);
    return -1;
  }
  return it->second;
}

bool Scrape::Has(const std::string& name, const std::map<std::string, std::string>& labels) const {
  return samples.count(SeriesKey(name, labels)) > 0 ||
         (labels.count("model") == 0 && over_models.count(SeriesKey(name, labels)) > 0);
}

absl::StatusOr<std::string> HttpGet(int port, const std::string& path) {
  const int fd = testing_support::ConnectLoopback(port, /*read_timeout_seconds=*/10);
  if (fd < 0) {
    return absl::UnavailableError(
        absl::StrCat("connect to port ", port, ": ", std::strerror(errno)));
  }
  const std::string request = absl::StrCat("GET ", path, " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
  if (send(fd, request.data(), request.size(), 0) != static_cast<ssize_t>(request.size())) {
    close(fd);
    return absl::UnavailableError("send failed");
  }
  std::string response;
  char buffer[65536];
  for (ssize_t n; (n = recv(fd, buffer, sizeof(buffer), 0)) > 0;) response.append(buffer, n);
  close(fd);
  const size_t body = response.find("\r\n\r\n");
  if (response.rfind("HTTP/1.", 0) != 0 || body == std::string::npos) {
    return absl::DataLossError(absl::StrCat("not an HTTP response: ", response.substr(0, 100)));
  }
  if (response.compare(9, 3, "200") != 0) {
    return absl::UnavailableError(response.substr(0, response.find("\r\n")));
  }
  return response.substr(body + 4);
}

absl::StatusOr<Scrape> ParseExposition(const std::string& text) {
  Scrape scrape;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    if (line[0] == '#') {
      std::istringstream words(line);
      std::string hash, kind, name, type;
      words >> hash >> kind >> name >> type;
      if (kind == "TYPE") scrape.types[name] = type;
      continue;
    }
    size_t pos = line.find_first_of("{ ");
    if (pos == std::string::npos) return absl::DataLossError(absl::StrCat("bad line: ", line));
    const std::string name = line.substr(0, pos);
    std::map<std::string, std::string> labels;
    if (line[pos] == '{' && !ParseLabels(line, &pos, &labels)) {
      return absl::DataLossError(absl::StrCat("bad labels: ", line));
    }
    const std::string value = line.substr(line.find_first_not_of(' ', pos));
    const double number = std::strtod(value.c_str(), nullptr);
    scrape.samples[SeriesKey(name, labels)] = number;
    if (labels.erase("model") > 0) scrape.over_models[SeriesKey(name, labels)] += number;
  }
  return scrape;
}

absl::StatusOr<Scrape> ScrapeMetrics(int port) {
  absl::StatusOr<std::string> body = HttpGet(port, "/metrics");
  if (!body.ok()) return body.status();
  return ParseExposition(*body);
}

}  // namespace server
