#include "s3/xml.h"

#include <algorithm>

#include <pugixml.hpp>

#include "common/encoding.h"

namespace strata::s3 {

std::string XmlEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      case '\r': out += "&#13;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

XmlWriter::XmlWriter() : out_("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n") {}

void XmlWriter::Open(std::string_view name) {
  out_.append("<").append(name);
  // AWS puts its namespace on result documents but not on <Error>, and
  // botocore's error parser only finds <Code> without it.
  if (first_ && name != "Error") out_.append(" xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"");
  first_ = false;
  out_.append(">");
}

void XmlWriter::OpenWithAttributes(
    std::string_view name, std::initializer_list<std::pair<std::string_view, std::string_view>> attrs) {
  first_ = false;
  out_.append("<").append(name);
  for (const auto& [k, v] : attrs) out_.append(" ").append(k).append("=\"").append(XmlEscape(v)).append("\"");
  out_.append(">");
}

void XmlWriter::Close(std::string_view name) { out_.append("</").append(name).append(">"); }

void XmlWriter::Element(std::string_view name, std::string_view text) {
  first_ = false;
  out_.append("<").append(name).append(">").append(XmlEscape(text));
  out_.append("</").append(name).append(">");
}

namespace {

// parse_ws_pcdata_single: an element whose only content is blanks keeps them
// (<Key> </Key> names the key " "; pugixml drops whitespace-only text by
// default), while the formatting whitespace between elements is still dropped.
bool Parse(std::string_view xml, pugi::xml_document* doc) {
  // A NUL reference would cut a key short (DeleteObjects deleting another
  // object than the one named): common/encoding.h XmlHasNul.
  if (XmlHasNul(xml)) return false;
  pugi::xml_parse_result r = doc->load_buffer(xml.data(), xml.size(),
                                              pugi::parse_default | pugi::parse_ws_pcdata_single,
                                              pugi::encoding_utf8);
  return static_cast<bool>(r);
}
}  // namespace

std::optional<DeleteRequest> ParseDeleteRequest(std::string_view xml) {
  pugi::xml_document doc;
  if (!Parse(xml, &doc)) return std::nullopt;
  pugi::xml_node root = doc.child("Delete");
  if (!root) return std::nullopt;
  DeleteRequest req;
  std::string_view quiet = root.child_value("Quiet");
  req.quiet = quiet == "true" || quiet == "True";
  for (pugi::xml_node obj : root.children("Object")) {
    pugi::xml_node key = obj.child("Key");
    if (!key) return std::nullopt;
    req.keys.emplace_back(key.child_value());
    pugi::xml_node version = obj.child("VersionId");
    req.version_ids.push_back(version ? std::optional<std::string>(version.child_value())
                                      : std::nullopt);
  }
  if (req.keys.empty() || req.keys.size() > 1000) return std::nullopt;
  return req;
}

namespace {
std::optional<std::string> ChildText(pugi::xml_node node, const char* name) {
  pugi::xml_node c = node.child(name);
  if (!c) return std::nullopt;
  return std::string(c.child_value());
}
}  // namespace

std::optional<VersioningXml> ParseVersioningConfiguration(std::string_view xml) {
  pugi::xml_document doc;
  if (!Parse(xml, &doc)) return std::nullopt;
  pugi::xml_node root = doc.child("VersioningConfiguration");
  if (!root) return std::nullopt;
  return VersioningXml{root.child_value("Status"), root.child_value("MfaDelete")};
}

std::optional<ObjectLockXml> ParseObjectLockConfiguration(std::string_view xml) {
  pugi::xml_document doc;
  if (!Parse(xml, &doc)) return std::nullopt;
  pugi::xml_node root = doc.child("ObjectLockConfiguration");
  if (!root) return std::nullopt;
  ObjectLockXml out;
  out.enabled = root.child_value("ObjectLockEnabled");
  pugi::xml_node rule = root.child("Rule");
  out.has_rule = static_cast<bool>(rule);
  pugi::xml_node d = rule.child("DefaultRetention");
  out.has_default_retention = static_cast<bool>(d);
  if (d) {
    out.mode = ChildText(d, "Mode");
    out.days = ChildText(d, "Days");
    out.years = ChildText(d, "Years");
  }
  return out;
}

std::optional<RetentionXml> ParseRetention(std::string_view xml) {
  pugi::xml_document doc;
  if (!Parse(xml, &doc)) return std::nullopt;
  pugi::xml_node root = doc.child("Retention");
  if (!root) return std::nullopt;
  return RetentionXml{ChildText(root, "Mode"), ChildText(root, "RetainUntilDate")};
}

std::optional<std::string> ParseLegalHold(std::string_view xml) {
  pugi::xml_document doc;
  if (!Parse(xml, &doc)) return std::nullopt;
  pugi::xml_node root = doc.child("LegalHold");
  if (!root) return std::nullopt;
  return std::string(root.child_value("Status"));
}

std::optional<RestoreRequestXml> ParseRestoreRequest(std::string_view xml) {
  pugi::xml_document doc;
  if (!Parse(xml, &doc)) return std::nullopt;
  pugi::xml_node root = doc.child("RestoreRequest");
  if (!root) return std::nullopt;
  RestoreRequestXml r;
  for (pugi::xml_node c : root.children()) {
    if (c.type() != pugi::node_element) continue;
    std::string_view name = c.name();
    if (name == "Days") {
      r.days = c.child_value();
    } else if (name == "GlacierJobParameters") {
      for (pugi::xml_node t : c.children()) {
        if (t.type() != pugi::node_element) continue;
        if (std::string_view(t.name()) != "Tier") return std::nullopt;
        r.tier = t.child_value();
      }
    } else if (name == "Tier") {
      r.tier = c.child_value();
    } else if (name == "Type" || name == "OutputLocation" || name == "SelectParameters" ||
               name == "Description") {
      if (name != "Description") r.unsupported = true;
    } else {
      return std::nullopt;
    }
  }
  return r;
}

std::optional<std::vector<CompletePartXml>> ParseCompleteMultipartUpload(std::string_view xml) {
  pugi::xml_document doc;
  if (!Parse(xml, &doc)) return std::nullopt;
  pugi::xml_node root = doc.child("CompleteMultipartUpload");
  if (!root) return std::nullopt;
  std::vector<CompletePartXml> parts;
  for (pugi::xml_node part : root.children("Part")) {
    CompletePartXml p;
    std::string number = part.child_value("PartNumber");
    if (number.empty() || number.size() > 9 ||
        number.find_first_not_of("0123456789") != std::string::npos) {
      return std::nullopt;
    }
    p.part_number = std::stol(number);
    p.etag = part.child_value("ETag");
    if (p.etag.size() >= 2 && p.etag.front() == '"' && p.etag.back() == '"') {
      p.etag = p.etag.substr(1, p.etag.size() - 2);
    }
    for (pugi::xml_node child : part.children()) {
      std::string_view name = child.name();
      if (name.starts_with("Checksum")) p.checksum = child.child_value();
    }
    parts.push_back(std::move(p));
  }
  return parts;
}

std::optional<std::vector<std::pair<std::string, std::string>>> ParseTagging(std::string_view xml) {
  pugi::xml_document doc;
  if (!Parse(xml, &doc)) return std::nullopt;
  pugi::xml_node set = doc.child("Tagging").child("TagSet");
  if (!set) return std::nullopt;
  std::vector<std::pair<std::string, std::string>> tags;
  for (pugi::xml_node tag : set.children("Tag")) {
    if (!tag.child("Key")) return std::nullopt;
    tags.emplace_back(tag.child_value("Key"), tag.child_value("Value"));
  }
  return tags;
}

std::optional<std::vector<CorsRule>> ParseCorsConfiguration(std::string_view xml) {
  pugi::xml_document doc;
  if (!Parse(xml, &doc)) return std::nullopt;
  pugi::xml_node root = doc.child("CORSConfiguration");
  if (!root) return std::nullopt;
  std::vector<CorsRule> rules;
  auto all = [](pugi::xml_node rule, const char* name) {
    std::vector<std::string> out;
    for (pugi::xml_node n : rule.children(name)) out.emplace_back(n.child_value());
    return out;
  };
  for (pugi::xml_node r : root.children("CORSRule")) {
    CorsRule rule;
    rule.id = r.child_value("ID");
    rule.methods = all(r, "AllowedMethod");
    rule.origins = all(r, "AllowedOrigin");
    rule.allowed_headers = all(r, "AllowedHeader");
    rule.expose_headers = all(r, "ExposeHeader");
    if (pugi::xml_node age = r.child("MaxAgeSeconds")) {
      std::string text = age.child_value();
      if (text.empty() || text.size() > 10 ||
          text.find_first_not_of("0123456789") != std::string::npos) {
        return std::nullopt;
      }
      rule.max_age_s = std::stoll(text);
    }
    rules.push_back(std::move(rule));
  }
  return rules;
}

std::string RenderCorsConfiguration(const std::vector<CorsRule>& rules) {
  XmlWriter w;
  w.Open("CORSConfiguration");
  for (const CorsRule& r : rules) {
    w.Open("CORSRule");
    if (!r.id.empty()) w.Element("ID", r.id);
    for (const auto& h : r.allowed_headers) w.Element("AllowedHeader", h);
    for (const auto& m : r.methods) w.Element("AllowedMethod", m);
    for (const auto& o : r.origins) w.Element("AllowedOrigin", o);
    for (const auto& e : r.expose_headers) w.Element("ExposeHeader", e);
    if (r.max_age_s) w.Element("MaxAgeSeconds", std::to_string(*r.max_age_s));
    w.Close("CORSRule");
  }
  w.Close("CORSConfiguration");
  return w.Finish();
}

std::optional<AccessControlPolicyDoc> ParseAccessControlPolicy(std::string_view xml) {
  pugi::xml_document doc;
  if (!Parse(xml, &doc)) return std::nullopt;
  pugi::xml_node root = doc.child("AccessControlPolicy");
  if (!root) return std::nullopt;
  AccessControlPolicyDoc out;
  out.owner_id = root.child("Owner").child_value("ID");
  pugi::xml_node list = root.child("AccessControlList");
  if (!list) return std::nullopt;
  for (pugi::xml_node g : list.children("Grant")) {
    pugi::xml_node grantee = g.child("Grantee");
    if (!grantee || !g.child("Permission")) return std::nullopt;
    AclGrant grant;
    grant.type = grantee.attribute("xsi:type").value();
    grant.id = grantee.child_value("ID");
    grant.uri = grantee.child_value("URI");
    grant.email = grantee.child_value("EmailAddress");
    grant.permission = g.child_value("Permission");
    static constexpr std::string_view kPermissions[] = {"FULL_CONTROL", "WRITE", "WRITE_ACP",
                                                        "READ", "READ_ACP"};
    if (std::find(std::begin(kPermissions), std::end(kPermissions), grant.permission) ==
        std::end(kPermissions)) {
      return std::nullopt;
    }
    out.grants.push_back(std::move(grant));
  }
  return out;
}

std::optional<std::string> ParseOwnershipControls(std::string_view xml) {
  pugi::xml_document doc;
  if (!Parse(xml, &doc)) return std::nullopt;
  pugi::xml_node rule = doc.child("OwnershipControls").child("Rule");
  if (!rule || !rule.child("ObjectOwnership")) return std::nullopt;
  return std::string(rule.child_value("ObjectOwnership"));
}

std::optional<EncryptionXml> ParseEncryptionConfiguration(std::string_view xml) {
  pugi::xml_document doc;
  if (!Parse(xml, &doc)) return std::nullopt;
  pugi::xml_node root = doc.child("ServerSideEncryptionConfiguration");
  if (!root) return std::nullopt;
  pugi::xml_node rule = root.child("Rule");
  if (!rule || rule.next_sibling("Rule")) return std::nullopt;
  EncryptionXml out;
  pugi::xml_node by_default = rule.child("ApplyServerSideEncryptionByDefault");
  if (by_default) {
    out.has_default = true;
    out.algorithm = by_default.child_value("SSEAlgorithm");
    if (pugi::xml_node k = by_default.child("KMSMasterKeyID")) out.kms_key_id = k.child_value();
  }
  out.bucket_key_enabled = rule.child_value("BucketKeyEnabled");
  return out;
}

std::optional<std::map<std::string, bool>> ParsePublicAccessBlock(std::string_view xml) {
  pugi::xml_document doc;
  if (!Parse(xml, &doc)) return std::nullopt;
  pugi::xml_node root = doc.child("PublicAccessBlockConfiguration");
  if (!root) return std::nullopt;
  std::map<std::string, bool> out;
  for (pugi::xml_node n : root.children()) {
    std::string_view v = n.child_value();
    if (v != "true" && v != "false" && v != "TRUE" && v != "FALSE") return std::nullopt;
    out[n.name()] = v == "true" || v == "TRUE";
  }
  return out;
}

std::string RenderTagging(const std::vector<std::pair<std::string, std::string>>& tags) {
  XmlWriter w;
  w.Open("Tagging");
  w.Open("TagSet");
  for (const auto& [k, v] : tags) {
    w.Open("Tag");
    w.Element("Key", k);
    w.Element("Value", v);
    w.Close("Tag");
  }
  w.Close("TagSet");
  w.Close("Tagging");
  return w.Finish();
}

std::optional<std::string> ParseCreateBucketConfiguration(std::string_view xml) {
  if (xml.find_first_not_of(" \t\r\n") == std::string_view::npos) return std::string();
  pugi::xml_document doc;
  if (!Parse(xml, &doc)) return std::nullopt;
  pugi::xml_node root = doc.child("CreateBucketConfiguration");
  if (!root) return std::nullopt;
  return std::string(root.child_value("LocationConstraint"));
}

}  // namespace strata::s3
