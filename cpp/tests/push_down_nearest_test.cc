// PushDownNearest on hand-built Lance scans: which top-k shapes become a nearest-neighbour search,
// what the pushed search holds, and the brute-force notes explain shows otherwise.
#include "ketch/plan/optimizer/push_down_nearest.h"

#include "test_util.h"

namespace ketch {
namespace {

::testing::Environment* const env = ::testing::AddGlobalTestEnvironment(new testing::Environment);

LogicalPlanPtr LanceScan(std::vector<io::LanceVectorIndex> indexes) {
  ScanInfo info;
  info.format = FileFormat::kLance;
  info.file_schema = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("x", arrow::float64()),
                                    arrow::field("emb", arrow::fixed_size_list(arrow::float32(), 3))});
  info.partition_schema = arrow::schema(arrow::FieldVector{});
  info.lance.uri = "/data/t.lance";
  info.lance.version = 1;
  info.lance.vector_indexes = std::move(indexes);
  info.files = {ScanFile{"/data/t.lance"}};
  return LogicalPlan::Scan(std::move(info)).ValueOrDie();
}

ExprPtr Query() {
  arrow::DoubleBuilder builder;
  EXPECT_TRUE(builder.AppendValues({1, 0, 2}).ok());
  return Expr::Literal(std::make_shared<arrow::FixedSizeListScalar>(builder.Finish().ValueOrDie()));
}

// Limit(k, Sort(d, Project(id, distance(emb, q) as d, scan))).
LogicalPlanPtr TopK(LogicalPlanPtr scan, const std::string& function, int64_t k, bool descending = false,
                    bool query_first = false) {
  auto call = query_first ? Expr::Call(function, {Query(), Expr::Column("emb")})
                          : Expr::Call(function, {Expr::Column("emb"), Query()});
  auto project =
      LogicalPlan::Project(std::move(scan), {Expr::Column("id"), Expr::Alias(call, "d")}).ValueOrDie();
  auto sort =
      LogicalPlan::Sort(project, SortSpec{{Expr::Column("d")}, {descending}, {descending}}).ValueOrDie();
  return LogicalPlan::Limit(sort, k).ValueOrDie();
}

const ScanInfo& ScanOf(const LogicalPlanPtr& plan) {
  return plan->inputs()[0]->inputs()[0]->inputs()[0]->scan();
}

TEST(PushDownNearest, MatchingIndexPushesTheSearch) {
  auto plan = TopK(LanceScan({{"emb_idx", "IVF_PQ", "emb", "cosine"}}), "embedding_cosine_distance", 7, false,
                   /*query_first=*/true);
  ASSERT_OK_AND_ASSIGN(auto result, PushDownNearest().Apply(plan));
  ASSERT_TRUE(result.changed);
  const auto& nearest = ScanOf(result.plan).lance.nearest;
  ASSERT_TRUE(nearest.has_value());
  EXPECT_EQ(nearest->column, "emb");
  EXPECT_EQ(nearest->query, (std::vector<double>{1, 0, 2}));
  EXPECT_EQ(nearest->k, 7);
  EXPECT_EQ(nearest->metric, "cosine");
  EXPECT_EQ(nearest->index_name, "emb_idx");
  EXPECT_EQ(nearest->nprobes, PushDownNearest::kNprobes);
  EXPECT_EQ(nearest->refine_factor, PushDownNearest::kRefineFactor);
  // Limit, Sort and Project stay: Ketch recomputes d on the k rows and orders them.
  EXPECT_EQ(result.plan->kind(), LogicalKind::kLimit);
  EXPECT_EQ(result.plan->inputs()[0]->kind(), LogicalKind::kSort);
  EXPECT_EQ(result.plan->inputs()[0]->inputs()[0]->kind(), LogicalKind::kProject);
  // A second run finds the search already pushed.
  ASSERT_OK_AND_ASSIGN(auto again, PushDownNearest().Apply(result.plan));
  EXPECT_FALSE(again.changed);
}

TEST(PushDownNearest, EuclideanNeedsAnL2Index) {
  auto plan = TopK(LanceScan({{"emb_idx", "IVF_HNSW_SQ", "emb", "l2"}}), "embedding_euclidean_distance", 3);
  ASSERT_OK_AND_ASSIGN(auto result, PushDownNearest().Apply(plan));
  ASSERT_TRUE(ScanOf(result.plan).lance.nearest.has_value());
  EXPECT_EQ(ScanOf(result.plan).lance.nearest->metric, "l2");
  EXPECT_EQ(ScanOf(result.plan).lance.nearest->index_type, "IVF_HNSW_SQ");
}

TEST(PushDownNearest, BruteForceNotes) {
  struct Case {
    LogicalPlanPtr plan;
    std::string note;
  };
  std::vector<Case> cases = {
      {TopK(LanceScan({}), "embedding_cosine_distance", 3), "None (brute force: no vector index on 'emb')"},
      {TopK(LanceScan({{"i", "IVF_PQ", "emb", "l2"}}), "embedding_cosine_distance", 3),
       "None (brute force: the index i (IVF_PQ) on 'emb' has metric l2, the query uses cosine)"},
      {TopK(LanceScan({{"i", "IVF_PQ", "emb", "cosine"}}), "embedding_cosine_distance", 3,
            /*descending=*/true),
       "None (brute force: a descending sort asks for the farthest rows)"},
  };
  for (const auto& c : cases) {
    ASSERT_OK_AND_ASSIGN(auto result, PushDownNearest().Apply(c.plan));
    EXPECT_TRUE(result.changed);
    EXPECT_FALSE(ScanOf(result.plan).lance.nearest.has_value());
    EXPECT_EQ(ScanOf(result.plan).lance.nearest_note, c.note);
    ASSERT_OK_AND_ASSIGN(auto again, PushDownNearest().Apply(result.plan));
    EXPECT_FALSE(again.changed);  // the note is set once
  }
}

TEST(PushDownNearest, FloatFilterInTheScanKeepsBruteForce) {
  ScanInfo info = LanceScan({{"i", "IVF_PQ", "emb", "cosine"}})->scan();
  info.filter = Expr::Call("greater", {Expr::Column("x"), Expr::Literal(arrow::MakeScalar(0.5))});
  auto plan = TopK(LogicalPlan::Scan(std::move(info)).ValueOrDie(), "embedding_cosine_distance", 3);
  ASSERT_OK_AND_ASSIGN(auto result, PushDownNearest().Apply(plan));
  EXPECT_FALSE(ScanOf(result.plan).lance.nearest.has_value());
  EXPECT_NE(ScanOf(result.plan).lance.nearest_note.find("cannot run exactly inside Lance"),
            std::string::npos);
}

TEST(PushDownNearest, OtherShapesAreLeftAlone) {
  // Not Lance: nothing to push into, no note.
  auto parquet =
      testing::FakeScan(arrow::schema({arrow::field("id", arrow::int64()),
                                       arrow::field("emb", arrow::fixed_size_list(arrow::float32(), 3))}));
  ASSERT_OK_AND_ASSIGN(auto result, PushDownNearest().Apply(TopK(parquet, "embedding_cosine_distance", 3)));
  EXPECT_FALSE(result.changed);
  // A sort on something else than a distance.
  auto scan = LanceScan({{"i", "IVF_PQ", "emb", "cosine"}});
  auto project = LogicalPlan::Project(scan, {Expr::Column("id"), Expr::Column("emb")}).ValueOrDie();
  auto sort = LogicalPlan::Sort(project, SortSpec{{Expr::Column("id")}, {false}, {false}}).ValueOrDie();
  ASSERT_OK_AND_ASSIGN(result, PushDownNearest().Apply(LogicalPlan::Limit(sort, 3).ValueOrDie()));
  EXPECT_FALSE(result.changed);
}

}  // namespace
}  // namespace ketch
