// Who is acting on this thread: the S3 front end sets an Actor for each
// request it handles, the server's own workers (lifecycle, restore, healer)
// one per action. The audited store (audit/log.h) writes a record for every
// synced metadata batch made while an Actor is set, in that same batch.
// The HTTP server runs a request on one thread from head to answer, so a
// thread-local scope is the request's scope.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "audit/record.h"

namespace strata::audit {

struct Actor {
  Kind kind = Kind::kChange;  // kChange for clients, kSystem for the server's own work
  std::string_view operation = "Unrouted";  // static storage (OpName) or outlives the scope
  std::string identity, source, request_id, bucket, key;
  const uint64_t* bytes_in = nullptr;  // the request body bytes read so far, if counted
  uint32_t changes = 0;                // change records written for this actor so far
};

// Sets `actor` as this thread's actor until destroyed (restoring the previous one).
class Scope {
 public:
  explicit Scope(Actor* actor);
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  Actor* previous_;
};

// The actor of this thread, or null.
Actor* CurrentActor();

// The server acting on its own: identity "strata:<part>" (lifecycle,
// restore), kind kSystem.
Actor SystemActor(std::string_view part, std::string_view operation, std::string bucket,
                  std::string key);

}  // namespace strata::audit
