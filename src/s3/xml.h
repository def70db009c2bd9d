// XML for S3: a small escaping writer for responses, and pugixml-based
// parsing of the request bodies S3 accepts.
#pragma once

#include <initializer_list>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "s3/cors.h"

namespace strata::s3 {

class XmlWriter {
 public:
  XmlWriter();
  // Opens <name> (with the S3 namespace on the first element).
  void Open(std::string_view name);
  // <name a="v" ...> (values escaped); never the first element.
  void OpenWithAttributes(std::string_view name,
                          std::initializer_list<std::pair<std::string_view, std::string_view>> attrs);
  void Close(std::string_view name);
  void Element(std::string_view name, std::string_view text);
  std::string Finish() { return std::move(out_); }

 private:
  std::string out_;
  bool first_ = true;
};

std::string XmlEscape(std::string_view s);

// <Delete><Quiet/><Object><Key/><VersionId/></Object>...</Delete>
struct DeleteRequest {
  bool quiet = false;
  std::vector<std::string> keys;
  std::vector<std::optional<std::string>> version_ids;  // one per key; nullopt: none given
};
std::optional<DeleteRequest> ParseDeleteRequest(std::string_view xml);

// <CompleteMultipartUpload><Part><PartNumber/><ETag/><ChecksumCRC32/>...</Part>...
struct CompletePartXml {
  long part_number = 0;
  std::string etag;      // quotes removed
  std::string checksum;  // base64 of any Checksum* element, "" if none
};
std::optional<std::vector<CompletePartXml>> ParseCompleteMultipartUpload(std::string_view xml);

// <Tagging><TagSet><Tag><Key/><Value/></Tag>...</TagSet></Tagging>
std::optional<std::vector<std::pair<std::string, std::string>>> ParseTagging(std::string_view xml);

// <CORSConfiguration><CORSRule>... (rules as sent, unvalidated: cors.h
// ValidateCors); nullopt when it is not that document.
std::optional<std::vector<CorsRule>> ParseCorsConfiguration(std::string_view xml);
std::string RenderCorsConfiguration(const std::vector<CorsRule>& rules);

// <AccessControlPolicy>: the grants (Grantee xsi:type, ID or URI or
// EmailAddress, Permission); nullopt when malformed.
struct AclGrant {
  std::string type, id, uri, email, permission;
};
struct AccessControlPolicyDoc {
  std::string owner_id;
  std::vector<AclGrant> grants;
};
std::optional<AccessControlPolicyDoc> ParseAccessControlPolicy(std::string_view xml);
// <OwnershipControls><Rule><ObjectOwnership>: its value.
std::optional<std::string> ParseOwnershipControls(std::string_view xml);
// <PublicAccessBlockConfiguration>: the flags given (true/false), by name.
std::optional<std::map<std::string, bool>> ParsePublicAccessBlock(std::string_view xml);
// The same document written (GetObjectTagging's response).
std::string RenderTagging(const std::vector<std::pair<std::string, std::string>>& tags);

// <VersioningConfiguration><Status/><MfaDelete/></VersioningConfiguration>
// (element texts as given; "" when absent). nullopt on malformed XML.
struct VersioningXml {
  std::string status;
  std::string mfa_delete;
};
std::optional<VersioningXml> ParseVersioningConfiguration(std::string_view xml);

// <ObjectLockConfiguration><ObjectLockEnabled/><Rule><DefaultRetention>
// <Mode/><Days/><Years/></DefaultRetention></Rule></ObjectLockConfiguration>
struct ObjectLockXml {
  std::string enabled;
  bool has_rule = false;
  bool has_default_retention = false;
  std::optional<std::string> mode, days, years;
};
std::optional<ObjectLockXml> ParseObjectLockConfiguration(std::string_view xml);

// <Retention><Mode/><RetainUntilDate/></Retention>
struct RetentionXml {
  std::optional<std::string> mode, retain_until;
};
std::optional<RetentionXml> ParseRetention(std::string_view xml);

// <LegalHold><Status/></LegalHold>: the status text ("" if absent).
std::optional<std::string> ParseLegalHold(std::string_view xml);

// <RestoreRequest>: Days, GlacierJobParameters/Tier, and whether it asks for
// what strata does not do (Type SELECT, OutputLocation, SelectParameters).
struct RestoreRequestXml {
  std::string days;  // text, "" if absent
  std::string tier;  // "" if absent
  bool unsupported = false;
};
std::optional<RestoreRequestXml> ParseRestoreRequest(std::string_view xml);

// <ServerSideEncryptionConfiguration><Rule><ApplyServerSideEncryptionByDefault>
// <SSEAlgorithm/><KMSMasterKeyID/></ApplyServerSideEncryptionByDefault>
// <BucketKeyEnabled/></Rule></...>: texts as given ("" when absent).
// nullopt on malformed XML or without exactly one Rule.
struct EncryptionXml {
  std::string algorithm;
  std::optional<std::string> kms_key_id;
  std::string bucket_key_enabled;
  bool has_default = false;
};
std::optional<EncryptionXml> ParseEncryptionConfiguration(std::string_view xml);

// <CreateBucketConfiguration><LocationConstraint/></...>; empty body ok.
// nullopt on malformed XML; the region ("" if none given) otherwise.
std::optional<std::string> ParseCreateBucketConfiguration(std::string_view xml);

}  // namespace strata::s3
