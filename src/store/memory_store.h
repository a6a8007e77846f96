// MemoryStore: the run store held in memory, for tests of modes, agents and reports. It keeps
// the same invariants, orderings and error cases as SqliteStore (store.h; both pass
// tests/contract/store_contract_test.cpp), and normalizes JSON the way a round trip through
// SQLite would (NaN becomes null, invalid UTF-8 becomes U+FFFD). Nothing survives the object.
//
//   MemoryStore store;
//   run_optimize(task, options, store);          // any code that takes a Store&
//   EXPECT_EQ(store.attempts(run_id)->size(), 5);
#pragma once

#include <map>
#include <mutex>
#include <utility>

#include "store/store.h"

namespace kf {

class MemoryStore final : public Store {
 public:
  Status create_run(const RunRecord& run) override;
  Expected<RunRecord> get_run(const std::string& id) override;
  Expected<std::vector<RunRecord>> list_runs() override;
  Status update_run(const std::string& id, const std::string& state,
                    const std::string& best_candidate, const nlohmann::json& summary) override;

  Status put_candidate(const CandidateRecord& candidate) override;
  Expected<std::optional<CandidateRecord>> get_candidate(const std::string& key) override;

  Expected<std::optional<EvaluationRecord>> find_evaluation(const std::string& key) override;
  Status record_evaluation(const EvaluationRecord& e, const AttemptRecord& a) override;
  Expected<int64_t> count_evaluations() override;

  Status put_attempt(const AttemptRecord& a) override;
  Expected<std::vector<AttemptRecord>> attempts(const std::string& run_id) override;
  Expected<int> next_attempt_seq(const std::string& run_id) override;

  Status put_message(const MessageRecord& m) override;
  Expected<std::vector<MessageRecord>> messages(const std::string& run_id) override;
  Expected<int> next_message_seq(const std::string& run_id) override;

  Status put_llm_exchange(const LlmExchangeRecord& e) override;
  Expected<std::vector<LlmExchangeRecord>> llm_exchanges(const std::string& run_id) override;
  Expected<int> next_llm_exchange_seq(const std::string& run_id) override;

 private:
  using RunSeq = std::pair<std::string, int>;

  Status check_attempt(std::string_view op, const AttemptRecord& a, bool evaluation_pending) const;
  void insert_attempt(AttemptRecord a);

  std::mutex mu_;
  std::vector<RunRecord> runs_;  // in insertion order
  std::map<std::string, CandidateRecord> candidates_;
  std::map<std::string, EvaluationRecord> evaluations_;
  std::map<RunSeq, AttemptRecord> attempts_;  // ordered by run, then seq
  std::map<RunSeq, MessageRecord> messages_;
  std::map<RunSeq, LlmExchangeRecord> exchanges_;
};

}  // namespace kf
