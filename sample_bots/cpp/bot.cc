// A Chinchón bot in C++: a worked example of the referee protocol (docs/bots.md).
//
//   export CHINCHON_TOKEN=$(cat my.token)      the token: never on a command line (ps)
//   chinchon_bot --target HOST:PORT                          wait in the queue, play
//   chinchon_bot ... --practice greedy --games 5             practice against a house bot
//   chinchon_bot --target HOST1:PORT,HOST2:PORT              several referee processes
//
// The target and token may also come from CHINCHON_TARGET / CHINCHON_TOKEN. Several
// addresses, comma-separated: referee processes sharing one database, each playing the
// games of bots that hold a stream on it; the bot holds one channel and one stream on
// each (one thread per address), each reconnecting on its own.
// It only ever sends one of the request's legal_actions, so it never breaks a rule:
// close whenever a close is legal; draw from the stock; discard the highest-point card
// that is not in a meld; let the referee lay off and lay down the best.
//
// Exit codes: 0 the referee ended the stream normally (or dismissed the bot); 1 it closed
// it with an error; 2 bad command line; 3 token refused (UNAUTHENTICATED); 4 referee
// unreachable. With several addresses: the bot exits once every stream has ended, 0 if
// one at least ended normally, 4 if none could be reached; 3 or 1 at any address ends it
// at once.

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <iostream>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "chinchon/v1/referee.grpc.pb.h"

namespace v1 = chinchon::v1;

namespace {

constexpr int kExitOk = 0, kExitFailure = 1, kExitUsage = 2, kExitAuth = 3, kExitUnreachable = 4;
// Without a welcome: longer than a restarted referee takes to come back and wait 30 s for
// its bots (docs/tournaments.md).
constexpr auto kReconnectBudget = std::chrono::seconds(60);

struct Options {
  std::string target, token;
  std::vector<std::string> targets;  // target split at its commas
  std::string practice;  // empty: queue mode (tournament games)
  int games = 1;
  bool tls = false;
  std::string tls_roots;  // PEM certificates to trust; empty: the system's roots
  bool verbose = false;
};

const char* kUsage =
    "usage: chinchon_bot [--target HOST:PORT[,HOST:PORT...]] [--token TOKEN]\n"
    "                    [--practice OPPONENT] [--games N] [--tls] [--tls-roots FILE.pem]\n"
    "                    [--verbose]\n"
    "  --target/--token default to $CHINCHON_TARGET / $CHINCHON_TOKEN\n"
    "  --target unix:PATH  a Unix socket (what a sandboxed bot dials)\n"
    "  --target a:1,b:2   several referee processes: one stream on each (not with --practice)\n"
    "  --practice random|greedy|strong|any   practice games instead of the queue\n";

// Several addresses: each line says which one it is about (set once, before any thread).
bool g_several = false;
std::mutex g_log_mu;

void log(const std::string& line) {
  std::lock_guard<std::mutex> lock(g_log_mu);
  std::cerr << "[cpp-bot] " << line << std::endl;
}

void log_at(const std::string& target, const std::string& line) {
  log(g_several ? "[" + target + "] " + line : line);
}

// The addresses of "a:1,b:2" (spaces around them dropped); nullopt if one is empty or
// given twice.
std::optional<std::vector<std::string>> split_targets(const std::string& text) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  std::stringstream ss(text + ",");
  for (std::string part; std::getline(ss, part, ',');) {
    const auto b = part.find_first_not_of(" \t"), e = part.find_last_not_of(" \t");
    if (b == std::string::npos) return std::nullopt;
    part = part.substr(b, e - b + 1);
    if (!seen.insert(part).second) return std::nullopt;
    out.push_back(part);
  }
  return out;
}

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  if (!in || !(text << in.rdbuf())) return std::nullopt;
  return text.str();
}

std::optional<Options> parse_args(int argc, char** argv) {
  Options o;
  if (const char* t = std::getenv("CHINCHON_TARGET")) o.target = t;
  if (const char* t = std::getenv("CHINCHON_TOKEN")) o.token = t;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") { std::cout << kUsage; std::exit(kExitOk); }
    if (a == "--tls") { o.tls = true; continue; }
    if (a == "--verbose") { o.verbose = true; continue; }
    const bool takes_value = a == "--target" || a == "--token" || a == "--practice" ||
                             a == "--games" || a == "--tls-roots";
    if (!takes_value) { log("unknown option " + a); return std::nullopt; }
    if (i + 1 >= argc) { log(a + " needs a value"); return std::nullopt; }
    const std::string v = argv[++i];
    if (a == "--target") {
      o.target = v;
    } else if (a == "--token") {
      o.token = v;
    } else if (a == "--practice") {
      o.practice = v;
    } else if (a == "--games") {
      size_t used = 0;
      try { o.games = std::stoi(v, &used); } catch (...) { used = 0; }
      if (used == 0 || used != v.size() || o.games < 1 || o.games > 100) {
        log("--games: a whole number from 1 to 100, not '" + v + "'");
        return std::nullopt;
      }
    } else {  // --tls-roots
      auto pem = read_file(v);
      if (!pem || pem->empty()) { log("--tls-roots: cannot read " + v); return std::nullopt; }
      o.tls_roots = *pem;
      o.tls = true;
    }
  }
  if (o.target.empty()) { log("--target (or CHINCHON_TARGET) is required"); return std::nullopt; }
  auto targets = split_targets(o.target);
  if (!targets) {
    log("--target: an address is empty or given twice in '" + o.target + "'");
    return std::nullopt;
  }
  o.targets = *targets;
  if (!o.practice.empty() && o.targets.size() > 1) {
    log("--practice plays on one referee: give one --target address, not " +
        std::to_string(o.targets.size()));
    return std::nullopt;
  }
  if (o.token.empty()) { log("--token (or CHINCHON_TOKEN) is required"); return std::nullopt; }
  return o;
}

// ---- cards -------------------------------------------------------------------------
// Text form: rank then suit letter ("1O" is the one of oros, "10O" the ten), or "JK1".
// The suit is always the LAST character: never read "10" as "1" + "0".
// The rule set's wild_cards (e.g. "1O") are jokers in every respect (docs/rules.md).

struct Card {
  bool joker = false;
  int rank = 0;
  char suit = 0;
};

Card parse_card(const std::string& text, const v1::RuleSet& rules) {
  Card c;
  if (text.rfind("JK", 0) == 0) { c.joker = true; return c; }
  for (const auto& w : rules.wild_cards()) {
    if (w == text) { c.joker = true; return c; }  // the referee sends canonical text
  }
  c.suit = text.back();
  c.rank = std::stoi(text.substr(0, text.size() - 1));
  return c;
}

int points(const Card& c, const v1::RuleSet& rules) {
  if (c.joker) return rules.has_joker_points() ? rules.joker_points() : 25;
  if (c.rank < 10) return c.rank;
  std::string fig = rules.has_figure_points() ? rules.figure_points()
                    : (rules.deck() == 48 ? "10-11-12" : "8-9-10");
  std::vector<int> p;
  std::stringstream ss(fig);
  for (std::string part; std::getline(ss, part, '-');) p.push_back(std::stoi(part));
  return p.size() == 3 ? p[c.rank - 10] : c.rank;
}

// Position in the deck's rank order: with 40 cards 7 and 10 are neighbours.
int order(int rank, const v1::RuleSet& rules) {
  bool short_deck = !rules.has_deck() || rules.deck() == 40;
  return short_deck && rank >= 10 ? rank - 2 : rank;
}

// A simple test, natural cards only: is the card part of a set (three of its rank) or
// of a run (three consecutive of its suit) in the hand?
bool in_meld(const Card& c, const std::vector<Card>& hand, const v1::RuleSet& rules) {
  if (c.joker) return true;
  int same_rank = 0;
  std::vector<bool> suit_has(16, false);
  for (const Card& h : hand) {
    if (h.joker) continue;
    if (h.rank == c.rank) ++same_rank;
    if (h.suit == c.suit) suit_has[order(h.rank, rules)] = true;
  }
  if (same_rank >= 3) return true;
  int o = order(c.rank, rules), lo = o, hi = o;
  while (lo > 1 && suit_has[lo - 1]) --lo;
  while (hi < 15 && suit_has[hi + 1]) ++hi;
  return hi - lo + 1 >= 3;
}

// ---- the policy: always one of the legal actions --------------------------------------

v1::Action choose(const v1::ActionRequest& req) {
  const auto& legal = req.legal_actions();
  const auto& obs = req.observation();
  const auto& rules = obs.rules();
  std::vector<Card> hand;
  for (const auto& t : obs.hand()) hand.push_back(parse_card(t, rules));

  const v1::Action* best = nullptr;
  int best_score = -1;
  // Close whenever a close is legal, putting the highest card face down.
  for (const auto& a : legal) {
    if (a.has_close() && a.close().best()) {
      int s = points(parse_card(a.close().card(), rules), rules);
      if (s > best_score) { best = &a; best_score = s; }
    }
  }
  if (best) return *best;
  // Discard the highest-point card not in a meld (a joker or a meld card only if forced).
  for (const auto& a : legal) {
    if (!a.has_discard()) continue;
    Card c = parse_card(a.discard().card(), rules);
    int s = points(c, rules) + (c.joker ? -1000 : in_meld(c, hand, rules) ? -100 : 0);
    if (!best || s > best_score) { best = &a; best_score = s; }
  }
  if (best) return *best;
  for (const auto& a : legal) {
    if (a.has_draw_stock() || a.has_lay_off_best() ||
        (a.has_lay_down() && a.lay_down().best())) {
      return a;
    }
  }
  return legal.empty() ? v1::Action() : legal[0];
}

// ---- the stream --------------------------------------------------------------------

// A fresh channel for every connection attempt: a channel remembers its failures and
// backs off on its own; a new one with a local subchannel pool dials at once.
std::shared_ptr<grpc::Channel> make_channel(const Options& o, const std::string& target) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(16 * 1024 * 1024);  // practice GameEnded carries the record
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 30000);     // the referee refuses pings < 5 s apart
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10000);
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  std::shared_ptr<grpc::ChannelCredentials> creds = grpc::InsecureChannelCredentials();
  if (o.tls) {
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = o.tls_roots;  // empty: gRPC's default roots
    creds = grpc::SslCredentials(ssl);
  }
  return grpc::CreateCustomChannel(target, creds, args);
}

// Messages read by a reader thread, so the main thread can skip to the newest request.
struct Inbox {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<v1::PlayResponse> queue;
  bool closed = false;
};

// Over every stream (one thread each).
struct Stats {
  std::atomic<int> games{0}, wins{0};
};

// One Play stream, from Hello to the end. `welcomed` says whether the referee answered.
// `dismissed`: the referee said nothing more is scheduled for the bot (exit, do not
// reconnect).
// Everything here is per stream (its inbox, its pending request): streams to several
// addresses, one thread each, never share a game's state.
grpc::Status play_stream(const Options& o, const std::string& target, bool& welcomed,
                         bool& dismissed, Stats& stats) {
  auto stub = v1::RefereeService::NewStub(make_channel(o, target));
  grpc::ClientContext ctx;
  ctx.AddMetadata("authorization", "Bearer " + o.token);
  auto stream = stub->Play(&ctx);

  v1::PlayRequest hello;
  hello.mutable_hello()->set_client("chinchon-cpp-sample 1.0");
  if (o.practice.empty()) {
    hello.mutable_hello()->mutable_queue();
  } else {
    auto* p = hello.mutable_hello()->mutable_practice();
    p->set_opponent(o.practice);
    p->set_games(o.games);
  }
  stream->Write(hello);

  Inbox inbox;
  std::thread reader([&] {
    v1::PlayResponse msg;
    while (stream->Read(&msg)) {
      std::lock_guard<std::mutex> lock(inbox.mu);
      inbox.queue.push_back(msg);
      inbox.cv.notify_one();
    }
    std::lock_guard<std::mutex> lock(inbox.mu);
    inbox.closed = true;
    inbox.cv.notify_one();
  });

  std::optional<v1::ActionRequest> pending;  // the newest request not yet answered
  for (bool closed = false; !closed;) {
    std::deque<v1::PlayResponse> batch;
    {
      std::unique_lock<std::mutex> lock(inbox.mu);
      inbox.cv.wait(lock, [&] { return !inbox.queue.empty() || inbox.closed; });
      batch.swap(inbox.queue);
      closed = inbox.closed;
    }
    for (const auto& msg : batch) {
      switch (msg.kind_case()) {
        case v1::PlayResponse::kWelcome:
          welcomed = true;
          log_at(target, "welcome " + msg.welcome().bot_name() + " (" + msg.welcome().protocol() + ")");
          break;
        case v1::PlayResponse::kGameStarted:
          pending.reset();
          log_at(target, "game " + msg.game_started().game_id() + " seat " +
              std::to_string(msg.game_started().seat()) +
              (msg.game_started().resumed() ? " (resumed)" : ""));
          break;
        case v1::PlayResponse::kActionRequest:
          pending = msg.action_request();  // a newer request replaces an older one
          break;
        case v1::PlayResponse::kActionRejected:
          log_at(target, "rejected: " + msg.action_rejected().error().violation() + " " +
              msg.action_rejected().error().message());
          break;
        case v1::PlayResponse::kDefaultPlayed:
          if (pending && pending->request_id() == msg.default_played().request_id()) {
            pending.reset();  // too late: the referee played for us
          }
          log_at(target, "timeout: the referee played for us, strike " +
              std::to_string(msg.default_played().strikes()));
          break;
        case v1::PlayResponse::kGameEnded: {
          pending.reset();
          const auto& end = msg.game_ended();
          ++stats.games;
          for (int w : end.result().winners()) stats.wins += (w == end.seat());
          log_at(target, "game " + end.game_id() + " ended: " + end.result().summary());
          break;
        }
        case v1::PlayResponse::kError:
          log_at(target, "error " + v1::ErrorCode_Name(msg.error().code()) + ": " + msg.error().message());
          break;
        case v1::PlayResponse::kDismissed:  // nothing more is scheduled: the stream ends (OK)
          dismissed = true;
          log_at(target, "dismissed by the referee (" + v1::DismissReason_Name(msg.dismissed().reason()) +
              "): " + msg.dismissed().message());
          break;
        default:
          break;
      }
    }
    if (pending && !closed) {
      v1::PlayRequest reply;
      reply.mutable_action()->set_request_id(pending->request_id());
      *reply.mutable_action()->mutable_action() = choose(*pending);
      if (o.verbose) log_at(target, "request " + std::to_string(pending->request_id()) + ": " +
                         reply.action().action().ShortDebugString());
      pending.reset();
      stream->Write(reply);
    }
  }
  reader.join();
  stream->WritesDone();
  return stream->Finish();
}

}  // namespace

namespace {

// One address, from the first dial until its stream ends for good: the exit code the
// bot would have for it alone.
int serve_address(const Options& o, const std::string& target, Stats& stats) {
  auto failing_since = std::chrono::steady_clock::now();
  auto delay = std::chrono::milliseconds(250);
  for (;;) {
    bool welcomed = false, dismissed = false;
    grpc::Status st = play_stream(o, target, welcomed, dismissed, stats);
    std::string summary = std::to_string(stats.games.load()) + " games, " +
                          std::to_string(stats.wins.load()) + " won";
    if (dismissed) {
      log_at(target, "done: " + summary);
      return kExitOk;
    }
    switch (st.error_code()) {
      case grpc::StatusCode::OK:
        log_at(target, "the referee ended the stream: " + summary);
        return kExitOk;
      case grpc::StatusCode::UNAUTHENTICATED:
        log_at(target, "token refused by the referee at " + target + ": " + st.error_message());
        return kExitAuth;
      case grpc::StatusCode::INVALID_ARGUMENT:
      case grpc::StatusCode::RESOURCE_EXHAUSTED:
      case grpc::StatusCode::FAILED_PRECONDITION:
      case grpc::StatusCode::PERMISSION_DENIED:
        log_at(target, "the referee at " + target + " closed the stream (code " +
                           std::to_string(st.error_code()) + "): " + st.error_message());
        return kExitFailure;
      default:  // UNAVAILABLE, a dropped connection...: reconnect with backoff
        break;
    }
    auto now = std::chrono::steady_clock::now();
    if (welcomed) {  // it was working: start the backoff and the budget afresh
      failing_since = now;
      delay = std::chrono::milliseconds(250);
    }
    if (now - failing_since + delay > kReconnectBudget) {
      log_at(target, "cannot reach the referee at " + target + ": " + st.error_message());
      return kExitUnreachable;
    }
    log_at(target, "stream lost (" + st.error_message() + "); reconnecting in " +
                       std::to_string(delay.count()) + " ms");
    std::this_thread::sleep_for(delay);
    delay = std::min(delay * 2, std::chrono::milliseconds(4000));
  }
}

}  // namespace

int main(int argc, char** argv) {
  auto opts = parse_args(argc, argv);
  if (!opts) { std::cerr << kUsage; return kExitUsage; }
  Stats stats;
  if (opts->targets.size() == 1) return serve_address(*opts, opts->targets[0], stats);
  // Several referee processes: one thread, channel and stream per address. A refused
  // token or another error at any address ends the bot at once; an address that stays
  // unreachable gives up alone.
  g_several = true;
  std::vector<int> codes(opts->targets.size(), kExitOk);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < opts->targets.size(); ++i) {
    threads.emplace_back([&, i] {
      const std::string& target = opts->targets[i];
      codes[i] = serve_address(*opts, target, stats);
      if (codes[i] == kExitAuth || codes[i] == kExitFailure) {
        log("giving up: a fatal error at " + target);
        std::_Exit(codes[i]);  // the other streams die with the process
      }
      if (codes[i] == kExitUnreachable) log_at(target, "playing on the other addresses");
    });
  }
  for (auto& t : threads) t.join();
  bool any_ok = false;
  for (int c : codes) any_ok = any_ok || c == kExitOk;
  log("every stream has ended: " + std::to_string(stats.games.load()) + " games, " +
      std::to_string(stats.wins.load()) + " won");
  return any_ok ? kExitOk : kExitUnreachable;
}
