// quiver/job/main_job_report.cc — the text of the main job's report (see
// main_job.h): aligned result rows, the client runs of the large result, the
// memory table and the headline. Pure functions of what RunMainJob measured.
#include <algorithm>
#include <cstdio>

#include "quiver/base/byte_size.h"
#include "quiver/job/main_job.h"

namespace quiver::job {
namespace {

std::string B(int64_t bytes) { return bytes < 0 ? "-" : FormatBytes(bytes); }

double Ratio(int64_t a, int64_t b) { return b > 0 ? static_cast<double>(a) / static_cast<double>(b) : 0.0; }

std::string CutCell(const std::string& cell, size_t max_chars) {
  if (cell.size() <= max_chars || max_chars < 4) return cell;
  return cell.substr(0, max_chars - 3) + "...";
}

std::string RunLabel(const MainJobFetchCost& c) {
  if (c.mode == "stream") return "streaming (each batch dropped once read)";
  return "holding every batch, policy " + c.policy;
}

}  // namespace

std::vector<std::string> FormatAlignedRows(const std::vector<std::string>& columns,
                                           const std::vector<std::vector<std::string>>& rows, size_t max_cell_chars,
                                           size_t max_line_chars) {
  std::vector<size_t> width(columns.size());
  for (size_t c = 0; c < columns.size(); ++c) {
    width[c] = CutCell(columns[c], max_cell_chars).size();
    for (const auto& r : rows) {
      if (c < r.size()) width[c] = std::max(width[c], CutCell(r[c], max_cell_chars).size());
    }
  }
  // The columns that fit in max_line_chars (at least one).
  size_t shown = 0, line = 0;
  while (shown < columns.size()) {
    const size_t next = line + (shown ? 3 : 0) + width[shown];
    if (shown > 0 && next > max_line_chars) break;
    line = next;
    ++shown;
  }
  auto format = [&](const std::vector<std::string>& cells) {
    std::string s;
    for (size_t c = 0; c < shown; ++c) {
      std::string cell = c < cells.size() ? CutCell(cells[c], max_cell_chars) : "";
      if (c) s += " | ";
      s += cell + std::string(width[c] - cell.size(), ' ');
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s;
  };
  std::vector<std::string> out;
  std::string header = format(columns);
  if (shown < columns.size()) {
    header += std::string(line > header.size() ? line - header.size() : 0, ' ') + " | ... (+" +
              std::to_string(columns.size() - shown) + " columns)";
  }
  out.push_back(header);
  for (const auto& r : rows) out.push_back(format(r));
  return out;
}

std::string FormatStageTable(const std::vector<MainJobStage>& stages) {
  const char* head[] = {"stage", "pool", "held", "peak", "RSS", "HWM", "detail"};
  std::vector<std::vector<std::string>> cells;
  int64_t rss_before = -2, hwm_before = -2;
  for (const auto& r : stages) {
    const bool same = r.rss_bytes == rss_before && r.hwm_bytes == hwm_before;
    cells.push_back(
        {r.stage, r.pool, r.held, r.peak, same ? "" : B(r.rss_bytes), same ? "" : B(r.hwm_bytes), r.detail});
    rss_before = r.rss_bytes;
    hwm_before = r.hwm_bytes;
  }
  size_t w[7];
  for (int c = 0; c < 7; ++c) {
    w[c] = std::string(head[c]).size();
    for (const auto& row : cells) w[c] = std::max(w[c], row[c].size());
  }
  std::string out;
  auto line = [&](const std::vector<std::string>& v) {
    std::string s;
    for (int c = 0; c < 7; ++c) {
      std::string cell = v[c];
      if (c < 6) cell += std::string(w[c] - cell.size(), ' ');
      s += (c ? " | " : "  ") + cell;
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    out += s + "\n";
  };
  line({head[0], head[1], head[2], head[3], head[4], head[5], head[6]});
  std::string sep = "  ";
  for (int c = 0; c < 7; ++c) sep += (c ? "-+-" : "") + std::string(c < 6 ? w[c] : 6, '-');
  out += sep + "\n";
  for (const auto& r : cells) line(r);
  return out;
}

std::string FormatFetchCosts(const MainJobResult& r) {
  const int64_t decoded = r.streaming.decoded_bytes;
  const bool rss = r.streaming.rss;
  char buf[512];
  std::snprintf(buf, sizeof buf, "   the client fetching (a), %s (decoded: %s, %.1fx the %s fetch window):\n",
                rss ? "each run in its own process, peak RSS over the process's start"
                    : "in this process, the client pool's peak",
                FormatBytes(decoded).c_str(), Ratio(decoded, r.window_bytes), FormatBytes(r.window_bytes).c_str());
  std::string out = buf;
  std::vector<const MainJobFetchCost*> runs = {&r.streaming};
  for (const auto& h : r.holding) runs.push_back(&h);
  size_t label_w = 0, peak_w = 0;
  for (const auto* c : runs) {
    label_w = std::max(label_w, RunLabel(*c).size());
    peak_w = std::max(peak_w, FormatBytes(c->client_peak_bytes).size());
  }
  for (const auto* c : runs) {
    const std::string label = RunLabel(*c), peak = FormatBytes(c->client_peak_bytes);
    std::snprintf(buf, sizeof buf, "     %s%s  %s%s  %5.2fx the decoded size  %6.2f s\n", label.c_str(),
                  std::string(label_w - label.size(), ' ').c_str(), std::string(peak_w - peak.size(), ' ').c_str(),
                  peak.c_str(), Ratio(c->client_peak_bytes, c->decoded_bytes), c->seconds);
    out += buf;
  }
  return out;
}

std::string FormatMainJobHeadline(const MainJobResult& r) {
  const MainJobFetchCost& s = r.streaming;
  const MainJobFetchCost* lo = nullptr;
  const MainJobFetchCost* hi = nullptr;
  for (const auto& h : r.holding) {
    if (lo == nullptr || h.client_peak_bytes < lo->client_peak_bytes) lo = &h;
    if (hi == nullptr || h.client_peak_bytes > hi->client_peak_bytes) hi = &h;
  }
  char line[1024];
  int n =
      std::snprintf(line, sizeof line,
                    "\n== headline: streaming query (a), %s decoded (%.1fx the %s window), the client's peak was %s "
                    "%s (%.2fx the decoded size)",
                    FormatBytes(s.decoded_bytes).c_str(), Ratio(s.decoded_bytes, r.window_bytes),
                    FormatBytes(r.window_bytes).c_str(), FormatBytes(s.client_peak_bytes).c_str(),
                    s.rss ? "of RSS" : "in its pool", Ratio(s.client_peak_bytes, s.decoded_bytes));
  std::string out(
      line, static_cast<size_t>(std::max(n, 0)) < sizeof line ? static_cast<size_t>(std::max(n, 0)) : sizeof line - 1);
  if (lo != nullptr && hi != nullptr) {
    std::snprintf(line, sizeof line, ";\n   holding all of it costs %.2fx (%s) to %.2fx (%s)",
                  Ratio(lo->client_peak_bytes, lo->decoded_bytes), lo->policy.c_str(),
                  Ratio(hi->client_peak_bytes, hi->decoded_bytes), hi->policy.c_str());
    out += line;
  }
  return out + "\n";
}

}  // namespace quiver::job
