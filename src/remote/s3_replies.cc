#include "remote/s3_replies.h"

#include <pugixml.hpp>

#include <charconv>
#include <sstream>

#include "common/encoding.h"

namespace strata::remote {
namespace {

// The document's root element if it parses and is named `root`.
std::optional<pugi::xml_node> Root(pugi::xml_document& doc, std::string_view xml,
                                   const char* root) {
  if (XmlHasNul(xml)) return std::nullopt;
  pugi::xml_parse_result r = doc.load_buffer(xml.data(), xml.size(), pugi::parse_default,
                                             pugi::encoding_utf8);
  if (!r) return std::nullopt;
  pugi::xml_node n = doc.document_element();
  if (std::string_view(n.name()) != root) return std::nullopt;
  return n;
}

std::optional<uint64_t> Number(std::string_view s) {
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

}  // namespace

std::optional<S3Error> ParseError(std::string_view xml) {
  pugi::xml_document doc;
  auto root = Root(doc, xml, "Error");
  if (!root) return std::nullopt;
  S3Error e{root->child_value("Code"), root->child_value("Message")};
  if (e.code.empty()) return std::nullopt;
  return e;
}

std::optional<std::string> ParseInitiate(std::string_view xml) {
  pugi::xml_document doc;
  auto root = Root(doc, xml, "InitiateMultipartUploadResult");
  if (!root) return std::nullopt;
  std::string id = root->child_value("UploadId");
  if (id.empty()) return std::nullopt;
  return id;
}

std::optional<ListPage> ParseListV2(std::string_view xml) {
  pugi::xml_document doc;
  auto root = Root(doc, xml, "ListBucketResult");
  if (!root) return std::nullopt;
  ListPage page;
  for (pugi::xml_node c : root->children("Contents")) {
    auto size = Number(c.child_value("Size"));
    std::string key = c.child_value("Key");
    if (!size || key.empty()) return std::nullopt;
    page.objects.push_back({std::move(key), *size});
  }
  const std::string_view truncated = root->child_value("IsTruncated");
  if (truncated == "true") {
    page.next_token = root->child_value("NextContinuationToken");
    if (page.next_token.empty()) return std::nullopt;  // truncated, but no way on
  } else if (truncated != "false" && !truncated.empty()) {
    return std::nullopt;
  }
  return page;
}

std::optional<UploadsPage> ParseListUploads(std::string_view xml) {
  pugi::xml_document doc;
  auto root = Root(doc, xml, "ListMultipartUploadsResult");
  if (!root) return std::nullopt;
  UploadsPage page;
  for (pugi::xml_node u : root->children("Upload")) {
    ListedUpload up{u.child_value("Key"), u.child_value("UploadId")};
    if (up.key.empty() || up.upload_id.empty()) return std::nullopt;
    page.uploads.push_back(std::move(up));
  }
  const std::string_view truncated = root->child_value("IsTruncated");
  page.truncated = truncated == "true";
  if (!page.truncated && truncated != "false" && !truncated.empty()) return std::nullopt;
  page.next_key_marker = root->child_value("NextKeyMarker");
  page.next_upload_id_marker = root->child_value("NextUploadIdMarker");
  if (page.truncated && page.next_key_marker.empty()) return std::nullopt;
  return page;
}

std::string CompleteBody(const std::vector<std::string>& etags) {
  pugi::xml_document doc;
  pugi::xml_node root = doc.append_child("CompleteMultipartUpload");
  root.append_attribute("xmlns") = "http://s3.amazonaws.com/doc/2006-03-01/";
  for (size_t i = 0; i < etags.size(); ++i) {
    pugi::xml_node part = root.append_child("Part");
    part.append_child("PartNumber").text().set(static_cast<unsigned long long>(i + 1));
    part.append_child("ETag").text().set(etags[i].c_str());
  }
  std::ostringstream out;
  doc.save(out, "", pugi::format_raw);
  return out.str();
}

}  // namespace strata::remote
