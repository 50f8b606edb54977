/**
 * What a Paper server with LuckPerms answers over RCON, for the simulated cluster and the tests'
 * RCON peer: the vanilla commands the access routes use (list, whitelist, banlist, ban, pardon,
 * kick) and LuckPerms' user commands, with their reply texts. LuckPerms colours its replies with
 * section-sign codes (granted nodes green §a, negated red §c), and RCON carries them as they are.
 */

const LP = '§7[§b§lL§3§lP§7]§r ';
const PAGE_SIZE = 15;
const NAME = /^[A-Za-z0-9_]{1,16}$/;

interface LpNode {
  node: string;
  value: boolean;
  world?: string;
}

export interface PaperGameOptions {
  maxPlayers?: number;
  /** Without LuckPerms every `lp` command is unknown. */
  luckPerms?: boolean;
  /** The server's log, for the lines a command prints on the console. */
  log?: (line: string, level?: 'INFO' | 'WARN') => void;
  groups?: string[];
}

/** The game state a Paper server keeps and the replies it gives to RCON commands. */
export class PaperGame {
  maxPlayers: number;
  readonly luckPerms: boolean;
  readonly online: string[] = [];
  readonly whitelist: string[] = [];
  readonly bans = new Map<string, { source: string; reason: string }>();
  readonly groups: Set<string>;
  /** Commands in the order they arrived (tests assert exactly what was sent). */
  readonly received: string[] = [];
  readonly #nodes = new Map<string, LpNode[]>();
  readonly #log: (line: string, level?: 'INFO' | 'WARN') => void;

  constructor(options: PaperGameOptions = {}) {
    this.maxPlayers = options.maxPlayers ?? 20;
    this.luckPerms = options.luckPerms ?? true;
    this.groups = new Set(options.groups ?? ['default', 'vip', 'moderator', 'admin']);
    this.#log = options.log ?? (() => undefined);
  }

  join(player: string): void {
    if (!this.online.includes(player)) this.online.push(player);
    this.#log(`${player} joined the game`);
  }

  execute(command: string): string {
    this.received.push(command);
    const words = command.trim().split(' ');
    const [verb = '', ...args] = words;
    switch (verb.toLowerCase()) {
      case 'list':
        return `There are ${this.online.length} of a max of ${this.maxPlayers} players online: ${this.online.join(', ')}`;
      case 'whitelist':
        return this.#whitelist(args);
      case 'banlist':
        return this.#banlist();
      case 'ban':
        return this.#ban(args);
      case 'pardon':
        return this.#pardon(args);
      case 'kick':
        return this.#kick(args);
      case 'say':
        this.#log(`[Server] ${args.join(' ')}`);
        return '';
      case 'save-all':
        this.#log('Saving the game (this may take a moment!)');
        this.#log('Saved the game');
        return 'Saving the game (this may take a moment!)Saved the game';
      case 'lp':
      case 'luckperms':
        if (this.luckPerms) return this.#luckPerms(args);
        break;
    }
    return `Unknown or incomplete command. See below for error\n${command}<--[HERE]`;
  }

  #admin(reply: string): string {
    this.#log(`[Rcon: ${reply}]`);
    return reply;
  }

  #whitelist([action, player]: string[]): string {
    if (action === 'list') {
      if (this.whitelist.length === 0) return 'There are no whitelisted players';
      return `There are ${this.whitelist.length} whitelisted player(s): ${this.whitelist.join(', ')}`;
    }
    if ((action === 'add' || action === 'remove') && player && NAME.test(player)) {
      const at = this.#indexOf(this.whitelist, player);
      if (action === 'add') {
        if (at >= 0) return 'Player is already whitelisted';
        this.whitelist.push(player);
        return this.#admin(`Added ${player} to the whitelist`);
      }
      if (at < 0) return 'Player is not whitelisted';
      this.whitelist.splice(at, 1);
      return this.#admin(`Removed ${player} from the whitelist`);
    }
    return `Unknown or incomplete command. See below for error\nwhitelist ${[action, player].filter(Boolean).join(' ')}<--[HERE]`;
  }

  #banlist(): string {
    if (this.bans.size === 0) return 'There are no bans';
    const entries = [...this.bans].map(([name, ban]) => `${name} was banned by ${ban.source}: ${ban.reason}`);
    return [`There are ${this.bans.size} ban(s):`, ...entries].join('\n');
  }

  #ban([player]: string[]): string {
    if (!player || !NAME.test(player)) return 'Unknown or incomplete command. See below for error\nban<--[HERE]';
    if (this.#bannedKey(player)) return 'Nothing changed. The player is already banned';
    this.bans.set(player, { source: 'Rcon', reason: 'Banned by an operator.' });
    this.#disconnect(player, 'You are banned from this server.');
    return this.#admin(`Banned ${player}: Banned by an operator.`);
  }

  #pardon([player]: string[]): string {
    const key = player && this.#bannedKey(player);
    if (!key) return "Nothing changed. The player isn't banned";
    this.bans.delete(key);
    return this.#admin(`Unbanned ${key}`);
  }

  #kick([player]: string[]): string {
    const at = player ? this.#indexOf(this.online, player) : -1;
    if (at < 0) return 'No player was found';
    const name = this.online[at]!;
    this.#disconnect(name, 'Kicked by an operator.');
    return this.#admin(`Kicked ${name}: Kicked by an operator.`);
  }

  #disconnect(player: string, reason: string): void {
    const at = this.#indexOf(this.online, player);
    if (at < 0) return;
    const [name] = this.online.splice(at, 1);
    this.#log(`${name} lost connection: ${reason}`);
    this.#log(`${name} left the game`);
  }

  /** `lp user <player> permission set|unset|info …` and `lp user <player> parent add|remove <group>`. */
  #luckPerms(args: string[]): string {
    const [scope, player, section, action, ...rest] = args;
    if (scope !== 'user' || !player || !NAME.test(player)) return `${LP}§cCommand not recognised.`;
    const nodes = this.#nodesOf(player);
    const world = rest.find((a) => a.startsWith('world='))?.slice('world='.length);
    const context = world ? `§bworld=${world}` : '§bglobal';
    if (section === 'permission' && action === 'info') return this.#info(player, nodes, Number(rest[0] ?? 1) || 1);
    if (section === 'permission' && (action === 'set' || action === 'unset')) {
      const node = rest[0];
      if (!node) return `${LP}§cNot enough arguments.`;
      const at = nodes.findIndex((n) => n.node === node && n.world === world);
      if (action === 'unset') {
        if (at < 0) return `${LP}§b${player}§a does not have §b${node}§a set in context ${context}§a.`;
        nodes.splice(at, 1);
        return `${LP}§aUnset §b${node}§a for §b${player}§a in context ${context}§a.`;
      }
      const value = rest[1] !== 'false';
      if (at >= 0 && nodes[at]!.value === value) return `${LP}§b${player}§a already has §b${node}§a set in context ${context}§a.`;
      if (at >= 0) nodes.splice(at, 1);
      nodes.push({ node, value, ...(world ? { world } : {}) });
      return `${LP}§aSet §b${node}§a to §${value ? 'a' : 'c'}${value}§a for §b${player}§a in context ${context}§a.`;
    }
    if (section === 'parent' && (action === 'add' || action === 'remove')) {
      const group = rest[0];
      if (!group || !this.groups.has(group)) return `${LP}§cA group named §4${group ?? ''}§c could not be found.`;
      const node = `group.${group}`;
      const at = nodes.findIndex((n) => n.node === node && n.world === world);
      if (action === 'add') {
        if (at >= 0) return `${LP}§b${player}§a already inherits from §b${group}§a in context ${context}§a.`;
        nodes.push({ node, value: true, ...(world ? { world } : {}) });
        return `${LP}§b${player}§a now inherits permissions from §b${group}§a in context ${context}§a.`;
      }
      if (at < 0) return `${LP}§b${player}§a does not inherit from §b${group}§a in context ${context}§a.`;
      nodes.splice(at, 1);
      return `${LP}§b${player}§a no longer inherits permissions from §b${group}§a in context ${context}§a.`;
    }
    return `${LP}§cCommand not recognised.`;
  }

  #info(player: string, nodes: LpNode[], page: number): string {
    const pages = Math.max(1, Math.ceil(nodes.length / PAGE_SIZE));
    const shown = nodes.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE);
    const header = `${LP}§b${player}'s Permissions:  §7(page §f${page}§7 of §f${pages}§7 - §f${nodes.length}§7 entries)`;
    const lines = shown.map((n) => `§3> §${n.value ? 'a' : 'c'}${n.node}${n.world ? ` §7(§fworld=${n.world}§7)` : ''}`);
    return [header, ...lines].join('\n');
  }

  #nodesOf(player: string): LpNode[] {
    const key = player.toLowerCase();
    let nodes = this.#nodes.get(key);
    if (!nodes) this.#nodes.set(key, (nodes = [{ node: 'group.default', value: true }]));
    return nodes;
  }

  #indexOf(list: string[], player: string): number {
    const wanted = player.toLowerCase();
    return list.findIndex((p) => p.toLowerCase() === wanted);
  }

  #bannedKey(player: string): string | undefined {
    const wanted = player.toLowerCase();
    return [...this.bans.keys()].find((k) => k.toLowerCase() === wanted);
  }
}
