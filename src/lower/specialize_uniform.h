// specialize_uniform (the `specialize_uniform` primitive's lowering): a marked loop's body gets a
// second version for the iterations where the index reads it makes at several positions hold one
// value. A register tile over rows reads the group of each row (14's rhs[grp[m], k, n] with rows
// m.o * 6 .. m.o * 6 + 5 unrolled): six loads of a weight vector per k where the rows share a
// group, which nearly every tile does. In the specialized body the six reads are one, so the C++
// compiler loads each weight vector once per k for all six rows:
//
//   for (m.o, 0, M / 6) { BODY }
//     →  for (m.o, 0, M / 6) {
//          if (0 <= m.o*6 && m.o*6 < M && ... && grp[m.o*6 + 1] == grp[m.o*6] && ...) {
//            BODY with every grp[m.o*6 + r] read as grp[m.o*6]
//          } else { BODY } }
//
// The reads merged are those of an integer tensor the body does not write, at indices that read
// no variable the body binds and no buffer it writes (so the test before the body computes
// them). The test makes each of its reads safe: where the tensor is an allocation around the
// loop (an intermediate such as grp), the index is checked against its extent first, so the
// reads may sit anywhere in the body (under a condition, in a loop that may not run); for an
// input, only reads outside any condition (an if, a select's branches, a predicated load) in
// loops whose extents the test can compute count, and the test requires those loops to run, so
// it reads only what the body itself would. Whatever the data, each iteration runs a body that
// computes what the original computes. Only serial and parallel loops are specialized (an
// unrolled or vector loop is gone by then); a loop with fewer than two such positions of one
// tensor is left as it is.
#pragma once

#include <set>
#include <string>

#include "ir/ir.h"

namespace kf::lowering {

// `loops`: the IR names ("STAGE.LOOP") of the loops marked by specialize_uniform.
ir::Stmt specialize_uniform(const ir::Stmt& s, const std::set<std::string>& loops);

}  // namespace kf::lowering
