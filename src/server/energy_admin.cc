// The admin API's "energy" action (docs/energy.md): the meter's figures as
// JSON, every one labelled by its source (measured, modelled).
#include <nlohmann/json.hpp>

#include "energy/meter.h"
#include "server/admin_api.h"

namespace strata::server {

std::string EnergyJson(const energy::EnergyReport& r) {
  using nlohmann::json;
  json node = {{"modelled_joules", r.node_modelled_joules},
               {"process_cpu_seconds", r.process_cpu_seconds},
               {"bytes", r.bytes},
               {"source", r.node_measured_joules ? "measured" : "modelled"}};
  if (r.node_measured_joules) node["measured_joules"] = *r.node_measured_joules;
  json workloads = json::array();
  for (const energy::WorkloadFigure& w : r.workloads) {
    json j = {{"kind", std::string(energy::WorkloadKindName(w.kind))},
              {"name", w.name},
              {"cpu_seconds", w.cpu_seconds},
              {"bytes", w.bytes},
              {"modelled_joules", w.modelled_joules}};
    if (w.measured_joules) j["measured_joules"] = *w.measured_joules;
    workloads.push_back(std::move(j));
  }
  json doc = {{"node", std::move(node)},
              {"workloads", std::move(workloads)},
              {"rapl_domains", r.rapl_domains},
              {"coefficients",
               {{"cpu_joules_per_second", r.coefficients.cpu_joules_per_second},
                {"network_joules_per_byte", r.coefficients.network_joules_per_byte},
                {"storage_joules_per_byte", r.coefficients.storage_joules_per_byte}}}};
  if (!r.rapl_error.empty()) doc["rapl_error"] = r.rapl_error;
  return doc.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::optional<std::pair<int, std::string>> HandleEnergyAction(energy::Meter* meter,
                                                              const std::string& method,
                                                              const std::string& action) {
  if (action != "energy") return std::nullopt;
  if (method != "GET") return AdminError(405, "energy takes GET");
  if (!meter) return AdminError(409, "energy figures are off");
  return std::make_pair(200, EnergyJson(meter->Snapshot()));
}

}  // namespace strata::server
