#include "audit/context.h"

namespace strata::audit {

namespace {
thread_local Actor* current = nullptr;
}

Scope::Scope(Actor* actor) : previous_(current) { current = actor; }
Scope::~Scope() { current = previous_; }
Actor* CurrentActor() { return current; }

Actor SystemActor(std::string_view part, std::string_view operation, std::string bucket,
                  std::string key) {
  Actor a;
  a.kind = Kind::kSystem;
  a.operation = operation;
  a.identity = "strata:" + std::string(part);
  a.bucket = std::move(bucket);
  a.key = std::move(key);
  return a;
}

}  // namespace strata::audit
