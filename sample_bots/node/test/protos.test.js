'use strict';
// The bot's only contract is the .proto files: they must load with proto-loader.
const test = require('node:test');
const assert = require('node:assert/strict');
const grpc = require('@grpc/grpc-js');
const { loadRefereeService } = require('../bot');

test('chinchon.v1.RefereeService loads from protos/ with a bidirectional Play', () => {
  const Service = loadRefereeService();
  assert.equal(typeof Service, 'function');
  const play = Service.service.Play;
  assert.equal(play.path, '/chinchon.v1.RefereeService/Play');
  assert.equal(play.requestStream, true);
  assert.equal(play.responseStream, true);
});

test('a uint64 request_id and a oneof action survive a round trip', () => {
  const play = loadRefereeService().service.Play;
  const reply = {
    action: {
      request_id: '18446744073709551615',
      action: { close: { card: '7O', best: true } },
    },
  };
  const back = play.requestDeserialize(play.requestSerialize(reply));
  assert.equal(back.kind, 'action');
  assert.equal(back.action.request_id, '18446744073709551615');
  assert.equal(back.action.action.kind, 'close');
  assert.equal(back.action.action.close.card, '7O');
  assert.equal(back.action.action.close.best, true);
});

test('every service and message of the four files is defined', () => {
  const protoLoader = require('@grpc/proto-loader');
  const { PROTO_DIR } = require('../bot');
  const files = ['game', 'record', 'referee', 'tournament'].map((f) => `chinchon/v1/${f}.proto`);
  const def = protoLoader.loadSync(files, { keepCase: true, includeDirs: [PROTO_DIR] });
  for (const name of ['chinchon.v1.RefereeService', 'chinchon.v1.TournamentService', 'chinchon.v1.GameRecord',
    'chinchon.v1.Observation', 'chinchon.v1.ActionRequest', 'google.protobuf.Duration']) {
    assert.ok(def[name], name);
  }
  assert.ok(grpc.loadPackageDefinition(def).chinchon.v1.TournamentService);
});

test('the protos are found where the referee gives them first (CHINCHON_PROTOS)', () => {
  const path = require('path');
  const fs = require('fs');
  const os = require('os');
  const { protoDir } = require('../bot');
  const repo = path.resolve(__dirname, '..', '..', '..', 'protos');
  const given = fs.mkdtempSync(path.join(os.tmpdir(), 'protos-'));
  try {
    fs.cpSync(path.join(repo, 'chinchon'), path.join(given, 'chinchon'), { recursive: true });
    assert.equal(protoDir(given), given);
    assert.equal(protoDir(path.join(given, 'nowhere')), repo); // a wrong one: the next found
    assert.equal(protoDir(undefined), repo);
  } finally {
    fs.rmSync(given, { recursive: true, force: true });
  }
});
