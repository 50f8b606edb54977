import { z } from '@hono/zod-openapi';
import { createRouter, defineRoute, errorAnswer, json, jsonBody } from '../../http/route.js';
import type { Access } from '../../http/tiers.js';
import { ApproveBody, ApprovedResponse, ApproverQuery, OpLoginDetail, OpLoginIdParam, PendingOpLogin } from './schema.js';
import { approveOpLogin, pendingRequests, requestForApprover } from './service.js';
import { toPendingView, toRequestDetail } from './views.js';

const PROXY: Access = { tier: 'service', callers: ['proxy'] };

const pending = defineRoute(PROXY, {
  method: 'get',
  path: '/api/v1/internal/op-login/pending',
  summary: 'Operator logins waiting for an in-game approval, oldest first',
  responses: { 200: json(z.object({ pending: z.array(PendingOpLogin) }), 'the pending requests') },
});

const show = defineRoute(PROXY, {
  method: 'get',
  path: '/api/v1/internal/op-login/{id}',
  summary: 'Whose operator login a pending request is, for a linked admin about to approve it',
  request: { params: OpLoginIdParam, query: ApproverQuery },
  responses: {
    200: json(OpLoginDetail, 'the request'),
    400: errorAnswer('bad_request: approver_uuid missing or not a UUID'),
    403: errorAnswer('wrong_caller, or not_admin: the approver is not a linked admin or owner'),
    404: errorAnswer('op_login_not_found: no live pending request has this id'),
  },
});

const approve = defineRoute(PROXY, {
  method: 'post',
  path: '/api/v1/internal/op-login/{id}/approve',
  summary: 'Approve a pending operator login in game, typing the account name it is for',
  request: { params: OpLoginIdParam, ...jsonBody(ApproveBody) },
  responses: {
    200: json(ApprovedResponse, 'approved'),
    403: errorAnswer('wrong_caller, or not_admin: the approver is not a linked admin or owner'),
    404: errorAnswer('op_login_not_found: no live pending request has this id'),
    409: errorAnswer('op_login_mismatch: the typed name is not the request’s account (audited; the request stays pending)'),
  },
});

/** The proxy's half of operator login. Internal face. */
export function internalOpLoginRoutes() {
  return createRouter()
    .openapi(pending, async (c) => {
      const rows = await pendingRequests(c.var.deps.database.db, c.var.deps.clock.now());
      return c.json({ pending: rows.map(toPendingView) }, 200);
    })
    .openapi(show, async (c) => {
      const request = await requestForApprover(c.var.deps, c.req.valid('param').id, c.req.valid('query').approver_uuid);
      return c.json(toRequestDetail(request), 200);
    })
    .openapi(approve, async (c) => {
      const body = c.req.valid('json');
      const approved = await approveOpLogin(c.var.deps, {
        id: c.req.valid('param').id,
        approverUuid: body.approver_uuid,
        typedUsername: body.username,
        requestId: c.var.requestId,
      });
      return c.json({ approved: true as const, ...approved }, 200);
    });
}
