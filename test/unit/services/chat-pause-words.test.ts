/**
 * How agent chat reads the person's reply to a paused turn (src/services/chats/agent-chat.ts): yes-words approve, a
 * JSON object edits the call's arguments, anything else refuses it with the reply as the reason; a question's reply
 * is its answer, whatever it says.
 */
import { decisionFromWords, type ChatPause } from '../../../src/services/chats/agent-chat';

const tool: ChatPause = {
  run: 'chat-1',
  kind: 'tool_approval',
  tool: 'fetch_url',
  arguments: { url: 'a' },
  question: null,
};
const question: ChatPause = { run: 'chat-1', kind: 'question', tool: null, arguments: null, question: 'Which year?' };

describe('a reply to a paused chat turn', () => {
  it.each(['yes', 'Yes please', 'ok', 'approve', 'go ahead, thanks'])('"%s" approves', (text) => {
    expect(decisionFromWords(text, tool)).toEqual({ action: 'approve' });
  });

  it('a JSON object edits the arguments', () => {
    expect(decisionFromWords(' {"url": "https://example.com"} ', tool)).toEqual({
      action: 'edit',
      arguments: { url: 'https://example.com' },
    });
  });

  it.each(['no', 'not that one', '{broken', 'yesterday was better'])(
    '"%s" refuses, with the reply as the reason',
    (text) => {
      expect(decisionFromWords(text, tool)).toEqual({ action: 'reject', reason: text });
    },
  );

  it('a question is answered by the reply as it is', () => {
    expect(decisionFromWords('yes, 2021', question)).toEqual({ action: 'answer', text: 'yes, 2021' });
  });
});
