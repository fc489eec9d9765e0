// The action's sticky pull-request comment (action.yml, step "Post the report"): one heading,
// the Markdown report of `apimctl plan` or `drift`, or what apimctl printed on stderr when it
// failed, cut to what a GitHub comment holds with a link to the whole report.
//
// Run by actions/github-script (`post`); `commentBody` is a pure function, tested by
// tests/unit/test_action_comment.py through node.
'use strict';

const fs = require('fs');

// GitHub refuses a comment or issue body over 65536 characters; keep room for the frame.
const LIMIT = 65000;
const ERROR_LINES = 60;

// A report that starts with its own "## apimctl plan" heading: the comment's title replaces it.
function withoutHeading(report, command) {
  const lines = report.split('\n');
  if (lines.length && lines[0].trim().startsWith(`## apimctl ${command}`)) {
    lines.shift();
    while (lines.length && lines[0].trim() === '') lines.shift();
  }
  return lines.join('\n');
}

// `text` cut at a line end to at most `budget` characters, any open code fence or <details>
// closed, and whether it was cut.
function truncate(text, budget) {
  if (text.length <= budget) return { text, cut: false };
  let cut = text.slice(0, Math.max(0, budget));
  const end = cut.lastIndexOf('\n');
  if (end > 0) cut = cut.slice(0, end);
  const fences = (cut.match(/^\s*```/gm) || []).length;
  if (fences % 2 === 1) cut += '\n```';
  const opened = (cut.match(/<details>/g) || []).length;
  const closed = (cut.match(/<\/details>/g) || []).length;
  for (let i = closed; i < opened; i++) cut += '\n</details>';
  return { text: cut, cut: true };
}

function lastLines(text, count) {
  const lines = text.replace(/\s+$/, '').split('\n');
  return (lines.length > count ? ['...', ...lines.slice(-count)] : lines).join('\n');
}

// The comment's whole body. `ok`: the exit codes that are not a failure ("0 2").
function commentBody(o) {
  const marker = `<!-- apimctl-${o.command}${o.commentId ? ':' + o.commentId : ''} -->`;
  const title = `## apimctl ${o.command}${o.commentId ? ' (' + o.commentId + ')' : ''} for ${o.sha}`;
  const links = [`[workflow run](${o.runUrl})`];
  if (o.artifactUrl) links.push(`[the whole report](${o.artifactUrl})`);
  const footerLinks = `<sub>${links.join(' · ')}</sub>`;
  const ok = String(o.ok || '0').split(/\s+/);
  let main;
  let footer = '';
  if (!ok.includes(String(o.code))) {
    const errors = lastLines(o.stderr || '', ERROR_LINES) || '(nothing on stderr)';
    main = `**apimctl ${o.command} failed (exit ${o.code || 'unknown'})**: ` +
      `${o.command === 'plan' ? 'no plan was made' : 'no report was made'}.\n\n` +
      '```text\n' + truncate(errors, 20000).text.replace(/```/g, "'''") + '\n```';
  } else {
    main = withoutHeading(o.report || '', o.command);
    if (o.command === 'plan') {
      footer = o.changes === 'true' ? '_Merging applies exactly this plan._' : '_Nothing to apply._';
    }
  }
  const frame = [`${marker}\n${title}`, footer, footerLinks].join('\n\n');
  const budget = LIMIT - frame.length - 400;  // 400: the note on a cut report
  const { text, cut } = truncate(main, budget);
  let shown = text;
  if (cut) {
    const where = o.artifactUrl ? `[the report artifact](${o.artifactUrl})` : `the [workflow run](${o.runUrl})'s log`;
    shown += `\n\n**The report is ${main.length} characters, more than a comment holds; ` +
      `it is cut here.** The whole of it: ${where}.`;
  }
  return [`${marker}\n${title}`, shown, footer, footerLinks].filter(Boolean).join('\n\n');
}

function readOr(path, fallback) {
  try { return path ? fs.readFileSync(path, 'utf8') : fallback; } catch (e) { return fallback; }
}

// Create the comment, or update the one this action posted before (found by its marker).
async function post({ github, context, env }) {
  const { owner, repo } = context.repo;
  const body = commentBody({
    command: env.COMMAND,
    commentId: env.COMMENT_ID,
    sha: context.payload.pull_request.head.sha.slice(0, 7),
    runUrl: `${context.serverUrl}/${owner}/${repo}/actions/runs/${context.runId}`,
    artifactUrl: env.ARTIFACT_URL,
    report: readOr(env.REPORT, ''),
    stderr: readOr(env.ERRORS, ''),
    code: env.CODE,
    ok: env.OK,
    changes: env.CHANGES,
  });
  const marker = body.slice(0, body.indexOf('\n'));
  const issue_number = context.payload.pull_request.number;
  const comments = await github.paginate(github.rest.issues.listComments,
    { owner, repo, issue_number, per_page: 100 });
  const mine = comments.find(c => (c.body || '').startsWith(marker));
  if (mine) {
    await github.rest.issues.updateComment({ owner, repo, comment_id: mine.id, body });
  } else {
    await github.rest.issues.createComment({ owner, repo, issue_number, body });
  }
}

module.exports = { LIMIT, commentBody, truncate, post };
