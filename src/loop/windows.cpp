// In-place checks of a verifying run: which arrays get a window, and where.
#include "loop/windows.hpp"

namespace strata::loop {

VerifyWindows::VerifyWindows(const Plan& plan, int rank, int threads) : plan_(plan) {
  using analysis::Strategy;
  const auto strategy = plan.choice.strategy;
  if (!(strategy == Strategy::one_d || (strategy == Strategy::two_d && !plan.ordered))) return;
  const auto T = static_cast<std::size_t>(threads);
  if (plan.space_bounds.size() < (static_cast<std::size_t>(rank) + 1) * T + 1) return;
  for (std::size_t th = 0; th < T; ++th) {
    const std::size_t w = static_cast<std::size_t>(rank) * T + th;
    space_.push_back(plan.space_bounds[w]);
    space_.push_back(plan.space_bounds[w + 1]);
  }
  time_.assign(2 * T, 0);  // empty windows until each thread's first block
  views_.reserve(plan.roles.size());  // the arrays hold pointers into it
  for (const auto& role : plan.roles) {  // one role per array
    strata::detail::WindowView view;
    if (role.placement == Placement::aligned && role.array_dim >= 0) {
      view = {role.array_dim, role.written, space_.data()};
    } else if (role.placement == Placement::travelling && role.array_dim >= 0 && strategy == Strategy::two_d) {
      view = {role.array_dim, role.written, time_.data()};
    } else if (!role.written && (role.placement == Placement::local || role.placement == Placement::replicated)) {
      view = {-1, false, nullptr};  // read-only data: read anywhere
    } else {
      continue;
    }
    auto* array = strata::detail::ArrayBase::find_array(role.array_id);
    if (!array || array->window_view()) continue;
    views_.push_back(view);
    array->set_window_view(&views_.back());
    arrays_.push_back(array);
  }
}

VerifyWindows::~VerifyWindows() {
  for (auto* a : arrays_) a->set_window_view(nullptr);
}

}  // namespace strata::loop
