#include "quasistep/core/commands_csv.hpp"

#include <charconv>
#include <cmath>
#include <fstream>
#include <iostream>
#include <istream>
#include <ostream>

#include "quasistep/core/csv_cells.hpp"

namespace qs::io {
namespace {

/// The cells of a line, each without the spaces and tabs around it (spreadsheets write
/// "1, 0.1").
std::vector<std::string> split_commas(const std::string& line) {
  std::vector<std::string> fields;
  std::size_t at = 0;
  while (true) {
    const std::size_t comma = line.find(',', at);
    std::string f = line.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    const std::size_t first = f.find_first_not_of(" \t"), last = f.find_last_not_of(" \t");
    fields.push_back(first == std::string::npos ? std::string() : f.substr(first, last - first + 1));
    if (comma == std::string::npos) return fields;
    at = comma + 1;
  }
}

std::string expected_header(std::span<const std::string> names) {
  std::string h = "step";
  for (const std::string& n : names) h += "," + n;
  return h;
}

}  // namespace

CommandSequence read_commands_csv(std::istream& in, const std::string& file, std::span<const std::string> names) {
  CommandSequence c;
  c.names.assign(names.begin(), names.end());
  const std::string header = expected_header(names);
  const std::size_t columns = names.size() + 1;
  bool have_header = false;
  std::string line;
  for (long number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (number == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);  // a UTF-8 byte order mark
    if (line.empty() || line.front() == '#') continue;
    const auto fail = [&](const std::string& why) {
      return CommandsCsvError(file + ": line " + std::to_string(number) + ": " + why);
    };
    const std::vector<std::string> fields = split_commas(line);
    if (!have_header) {
      std::string given = fields[0];
      for (std::size_t k = 1; k < fields.size(); ++k) given += "," + fields[k];
      if (given != header)
        throw fail("the header must be \"" + header +
                   "\" (step, then the scene's velocity-commanded joints in order), not \"" + line + "\"");
      have_header = true;
      continue;
    }
    if (fields.size() != columns)
      throw fail(std::to_string(fields.size()) + " columns where the header has " + std::to_string(columns));
    int step = 0;
    const auto [end, ec] = std::from_chars(fields[0].data(), fields[0].data() + fields[0].size(), step);
    if (ec != std::errc() || end != fields[0].data() + fields[0].size() || step != c.steps + 1)
      throw fail("step must be " + std::to_string(c.steps + 1) + " (rows are steps 1, 2, ... in order), not \"" +
                 fields[0] + "\"");
    for (std::size_t k = 1; k < columns; ++k) {
      double v = 0;
      if (!parse_finite(fields[k], v)) throw fail(names[k - 1] + ": \"" + fields[k] + "\" is not a finite number");
      c.values.push_back(v);
    }
    ++c.steps;
  }
  if (in.bad()) throw CommandsCsvError(file + ": cannot be read");
  if (!have_header) throw CommandsCsvError(file + ": no header line \"" + header + "\"");
  return c;
}

CommandSequence read_commands_csv_file(const std::string& path, std::span<const std::string> names) {
  if (path == "-") return read_commands_csv(std::cin, "standard input", names);
  std::ifstream in(path);
  if (!in) throw CommandsCsvError(path + ": cannot be opened");
  return read_commands_csv(in, path, names);
}

void write_commands_csv(const CommandSequence& commands, const std::string& provenance, std::ostream& out) {
  const auto precision = out.precision(17);
  out << provenance << "\n" << expected_header(commands.names) << "\n";
  for (int l = 1; l <= commands.steps; ++l) {
    out << l;
    for (double v : commands.step(l)) out << "," << v;
    out << "\n";
  }
  out.precision(precision);
}

}  // namespace qs::io
