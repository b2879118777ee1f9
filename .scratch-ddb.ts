import { startDynamoDBLocal } from './tools/dynamodbLocal.js';
const local = await startDynamoDBLocal({ log: (m) => process.stderr.write(m + '\n') });
console.log(local.endpoint);
process.on('SIGTERM', async () => { await local.stop(); process.exit(0); });
setInterval(() => {}, 1 << 30);
