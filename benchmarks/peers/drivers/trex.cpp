// Runs one TESLA rule on T-Rex's engine (TRex2-lib, CPU engine, one processing thread):
//   define Match(key, id) from B(key => $k) and each A(key = $k) within W from B
// Events come from a file, one per line: "TIME A KEY ID" or "TIME B KEY ID" (TIME in ms, not
// decreasing); they are read into memory first. Each composite event is written to OUTPUT as
// "TIME KEY ID"; statistics go to standard error as JSON.
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <string>
#include <unistd.h>
#include <vector>

#include "Common/CompositeEventTemplate.h"
#include "Common/OpTree.h"
#include "Engine/TRexEngine.h"
#include "Packets/PubPkt.h"
#include "Packets/RulePkt.h"
#include "Packets/RulePktValueReference.h"

static const int EVENT_A = 1, EVENT_B = 2, EVENT_MATCH = 3;
static char ATTR_KEY[] = "key";
static char ATTR_ID[] = "id";

struct Event { uint64_t time; int type; int key; int id; };

class Writer : public ResultListener {
public:
  explicit Writer(FILE* out) : out(out) {}
  void handleResult(std::set<PubPkt*>& pkts, double) override {
    for (PubPkt* p : pkts) {
      if (p->getEventType() != EVENT_MATCH) continue;
      int ki, ii;
      ValType kt, it;
      p->getAttributeIndexAndType(ATTR_KEY, ki, kt);
      p->getAttributeIndexAndType(ATTR_ID, ii, it);
      fprintf(out, "%llu %d %d\n", (unsigned long long)p->getTimeStamp().getTimeVal(),
              p->getIntAttributeVal(ki), p->getIntAttributeVal(ii));
      matches++;
    }
  }
  FILE* out;
  long matches = 0;
};

static double cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: trex_bench EVENTS WINDOW_MS OUTPUT" << std::endl;
    return 2;
  }
  double cpu0 = cpu_seconds();
  std::vector<Event> events;
  {
    std::ifstream in(argv[1]);
    std::string kind;
    Event e;
    while (in >> e.time >> kind >> e.key >> e.id) {
      e.type = kind == "A" ? EVENT_A : EVENT_B;
      events.push_back(e);
    }
  }
  RulePkt* rule = new RulePkt(false);
  rule->addRootPredicate(EVENT_B, NULL, 0);
  rule->addPredicate(EVENT_A, NULL, 0, 0, TimeMs(std::stoull(argv[2])), EACH_WITHIN);
  rule->addParameterBetweenStates(0, ATTR_KEY, 1, ATTR_KEY);
  CompositeEventTemplate* tmpl = new CompositeEventTemplate(EVENT_MATCH);
  tmpl->addAttribute(ATTR_KEY, new OpTree(new RulePktValueReference(0, ATTR_KEY, STATE), INT));
  tmpl->addAttribute(ATTR_ID, new OpTree(new RulePktValueReference(1, ATTR_ID, STATE), INT));
  rule->setCompositeEventTemplate(tmpl);

  FILE* out = fopen(argv[3], "w");
  TRexEngine engine(1);
  engine.processRulePkt(rule);
  engine.finalize();  // starts the processing thread, then sleeps 1 ms for it to wait for work
  usleep(200000);     // more time: an event handed over before the thread waits is lost (a hang)
  Writer writer(out);
  engine.addResultListener(&writer);
  double cpu1 = cpu_seconds();
  for (const Event& e : events) {
    Attribute attrs[2];
    strcpy(attrs[0].name, ATTR_KEY);
    attrs[0].type = INT;
    attrs[0].intVal = e.key;
    strcpy(attrs[1].name, ATTR_ID);
    attrs[1].type = INT;
    attrs[1].intVal = e.id;
    PubPkt* pkt = new PubPkt(e.type, attrs, 2);
    pkt->setTime(TimeMs(e.time));
    engine.processPubPkt(pkt);  // the engine frees the packet
  }
  fclose(out);
  double cpu2 = cpu_seconds();
  std::cerr << "{\"events\": " << events.size() << ", \"matches\": " << writer.matches
            << ", \"read_cpu_s\": " << cpu1 - cpu0 << ", \"process_cpu_s\": " << cpu2 - cpu1 << "}"
            << std::endl;
  return 0;
}
